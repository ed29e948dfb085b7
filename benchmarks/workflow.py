"""Workflow overhead: N trivial children through ``pipeline`` against the host starting the same children itself.

Both sides run on one real reference host with the plugin loaded and child
agents lent by :class:`~hookspecs.reference.children.ReferenceChildAgents`,
at the same concurrency (the default, ``min(16, max(1, cores - 2))``, unless
``--concurrency``). Each child is a fork of the parent session answering its
prompt in one model step (a scripted model: no network, no tools).

- **host**: the host's own child start — ``children.run`` for each of the N
  requests, at most ``concurrency`` at once (an ``asyncio.Semaphore``).
- **workflow**: one ``run_workflow`` call whose script is
  ``await pipeline(args, lambda prev, item: agent(item))`` over the same N
  prompts: the confined script, its channel frames, the lane's checks, the
  FIFO slots and the progress records in the parent's log.

Reported: each side's wall time, the time per child, and the ratio
``workflow_per_child / host_per_child`` (the overhead per child over the
host's own child start), with the load average: the ratio is what a busy
shared machine distorts least. ``rounds`` repeats both sides alternately and
keeps the median.

Run: ``.venv/bin/python benchmarks/workflow.py [--children 1000] [--rounds 3] [--concurrency N]``
→ benchmarks/results/workflow.json
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ptc_plus.plugin
from hookspecs.children import ChildRequest
from hookspecs.reference import AssistantTurn, ModelRequest, ReferenceHost
from hookspecs.reference.children import ChildProvider
from ptc_plus.workflow import WorkflowCaps, default_concurrency

RESULTS = Path(__file__).resolve().parent / "results" / "workflow.json"
SCRIPT = "return await pipeline(args, lambda prev, item: agent(item))"


class Answer:
    """A child's model: one step, its prompt back."""

    route = "bench-child"

    async def complete(self, request: ModelRequest) -> AssistantTurn:
        prompt = next(m["content"] for m in reversed(request.messages) if m["role"] == "user")
        return AssistantTurn(text=str(prompt))


async def one_round(children: int, concurrency: int, scratch: Path) -> dict[str, float]:
    workspace = scratch / f"workspace-{time.monotonic_ns()}"
    workspace.mkdir()
    provider = ChildProvider(make=lambda request: Answer())
    async with ReferenceHost(
        workspace=workspace, plugins=[ptc_plus.plugin], load_entry_points=False, child_providers={"": provider}
    ) as host:
        desk = ptc_plus.plugin.desk(host.services)
        assert desk is not None and host.children is not None
        desk.caps = WorkflowCaps(max_concurrent_agents=concurrency)
        parent = await host.start_session()
        prompts = [f"item {i}" for i in range(children)]

        slots = asyncio.Semaphore(concurrency)

        async def direct(prompt: str) -> str:
            assert host.children is not None
            async with slots:
                result = await host.children.run(ChildRequest(parent=parent.agent, prompt=prompt))
            return result.text

        started = time.perf_counter()
        texts = await asyncio.gather(*(direct(p) for p in prompts))
        host_s = time.perf_counter() - started
        assert texts == prompts

        started = time.perf_counter()
        result = await parent.call_tool("run_workflow", {"script": SCRIPT, "args": prompts})
        workflow_s = time.perf_counter() - started
        assert result.ok and isinstance(result.value, dict), result
        assert result.value["value"] == prompts and result.value["agents"]["succeeded"] == children
    return {"host_s": host_s, "workflow_s": workflow_s}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--children", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=default_concurrency())
    parser.add_argument("--output", type=Path, default=RESULTS)
    options = parser.parse_args()
    rounds: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="ptc-workflow-bench-") as scratch:
        os.environ["XDG_CONFIG_HOME"] = str(Path(scratch) / "xdg")
        os.environ["PTC_PLUS_CACHE_DIR"] = str(Path(scratch) / "cache")
        for _ in range(options.rounds):
            rounds.append(asyncio.run(one_round(options.children, options.concurrency, Path(scratch))))
    host_s = statistics.median(r["host_s"] for r in rounds)
    workflow_s = statistics.median(r["workflow_s"] for r in rounds)
    per_child_host = host_s / options.children
    per_child_workflow = workflow_s / options.children
    result = {
        "version": 1,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cores": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "children": options.children,
        "concurrency": options.concurrency,
        "rounds": [{k: round(v, 3) for k, v in r.items()} for r in rounds],
        "median_host_s": round(host_s, 3),
        "median_workflow_s": round(workflow_s, 3),
        "host_ms_per_child": round(per_child_host * 1000, 3),
        "workflow_ms_per_child": round(per_child_workflow * 1000, 3),
        "overhead_ms_per_child": round((per_child_workflow - per_child_host) * 1000, 3),
        "ratio_workflow_over_host": round(per_child_workflow / per_child_host, 3),
    }
    options.output.parent.mkdir(parents=True, exist_ok=True)
    options.output.write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2) + b"\n")
    print(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())


if __name__ == "__main__":
    main()
