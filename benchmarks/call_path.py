"""The per-call path through the reference host, before and after (issue 32 item 2, ADR 0114).

Each round runs one child process per source tree (``before``: ``git archive`` of ``--baseline``, default
``git merge-base HEAD main``; ``after``: this checkout), in alternation; a child imports ``ptc_plus`` and
``hookspecs`` from its tree (the launcher checks it) and the measuring code from
:mod:`benchmarks.runtime` of this checkout, and measures in one process:

- a raw AF_UNIX socketpair ping-pong of the same frames with a child process (the floor);
- ``--calls`` sequential nested calls of a no-op tool per call, through the runtime's own lane (direct
  dispatch) and through the reference host's full pipeline (validation, guard, the ``tool-execute`` and
  ``tool-result`` seams, the session log), each minus a trivial run;
- 1,000 calls of a tool sleeping 10 ms, ``max_parallel`` 16, through the host, vs the ideal 1000/16 x 10 ms;
- the host pipeline's own CPU time per nested call, no sandbox: a host tool dispatching ``--calls`` nested
  no-op calls one at a time and 16 at a time (``time.process_time`` of the host process, which a loaded
  machine inflates less than the wall-clock figures above, whose context switches wait for a core).

Ratios are taken inside one child (same process, same moment), then the median over rounds. Targets
(issue 32): through the host at most 1.5x the socketpair; the parallel calls at least 95 % of ideal.

Run: ``.venv/bin/python benchmarks/call_path.py [--rounds 3] [--calls 5000]`` → benchmarks/results/call_path.json
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results" / "call_path.json"
HOST_BOUND = 1.5
PARALLEL_BOUND = 0.95


async def _pipeline_cpu(calls: int, width: int) -> float:
    """Host CPU seconds per nested no-op call dispatched by a host tool, ``width`` at a time."""
    from hookspecs import ToolCall, ToolContext, ToolDefinition, ToolSpec
    from hookspecs.reference import ReferenceHost

    async def noop(arguments: Any, context: ToolContext) -> None:
        return None

    async def outer(arguments: Any, context: ToolContext) -> float:
        parent = context.call

        def nested(i: int) -> ToolCall:
            call_id = f"{parent.call_id}:t:{i}"
            return ToolCall(
                call_id=call_id, tool="noop", arguments={}, caller=parent.caller, parent_call_id=parent.call_id
            )

        start = time.process_time()
        for first in range(0, calls, width):
            await asyncio.gather(*(context.services.dispatch(nested(i)) for i in range(first, first + width)))
        return (time.process_time() - start) / calls

    tools = [
        ToolDefinition(spec=ToolSpec(name=n, description=n), handler=h) for n, h in (("noop", noop), ("outer", outer))
    ]
    with tempfile.TemporaryDirectory() as state:
        host = ReferenceHost(
            workspace=Path(state), state_dir=Path(state) / "host", tools=tools, load_entry_points=False, max_parallel=16
        )
        async with host:
            session = await host.start_session(user_id="bench", title="bench")
            result = await session.call_tool("outer", {})
    assert isinstance(result.value, float), result
    return result.value


async def _measure(calls: int) -> dict[str, float]:
    import runtime as bench  # benchmarks/runtime.py of this checkout, over the tree on PYTHONPATH

    workspace = Path(tempfile.mkdtemp(prefix="ptc-call-path-")).resolve()
    pair = bench._ping_pong(calls, use_socketpair=True)
    direct = await bench._direct(workspace, bench.NESTED_PROGRAM.format(n=calls), bench.NOOP, 1) / calls
    base = await bench._through_host(workspace, "return 0", [bench.NOOP], 8)
    hosted = (
        await bench._through_host(workspace, bench.NESTED_PROGRAM.format(n=calls), [bench.NOOP], 8) - base
    ) / calls
    code = (
        "import asyncio\nvalues = await asyncio.gather(*[tools.sleep10() for _ in range(1000)])\nreturn sum(values)\n"
    )
    parallel = await bench._through_host(workspace, code, [bench.SLEEP], 16) - base
    return {
        "host_pipeline_cpu_per_call_s": await _pipeline_cpu(calls, 1),
        "host_pipeline_cpu_per_call_16_parallel_s": await _pipeline_cpu(calls, 16),
        "socketpair_ping_pong_s": pair,
        "direct_per_call_s": direct,
        "host_per_call_s": hosted,
        "host_ratio_to_socketpair": hosted / pair,
        "direct_ratio_to_socketpair": direct / pair,
        "parallel_host_s": parallel,
        "parallel_host_efficiency": (1000 / 16 * 0.010) / parallel,
    }


def _child(root: str, calls: int) -> None:
    sys.path.insert(0, str(HERE))
    figures = asyncio.run(_measure(calls))
    for package in ("ptc_plus", "hookspecs"):
        found = sys.modules[package].__file__ or ""
        assert found.startswith(root + "/"), (found, root)
    sys.stdout.write(orjson.dumps(figures).decode() + "\n")


Samples = dict[str, list[dict[str, float]]]
"""Per tree (``before``, ``after``), one figures object per round."""


def compare_trees(
    child: Callable[[Path], list[str]], *, rounds: int, baseline: str | None, prefix: str, only_after: bool = False
) -> tuple[Samples, dict[str, str]]:
    """The timing loop this and ``call_path_parts.py`` share: each round runs ``child(tree)`` (an argv) once per
    source tree, in alternation — ``before`` a ``git archive`` of ``baseline`` (default: where this branch left
    main), ``after`` this checkout — with ``PYTHONPATH`` the tree and the directory a scratch one (``-c`` puts
    the current directory first on the path); each child prints its figures as its last line of JSON.

    Returns the samples per tree and the baseline (``ref``, ``commit``).
    """
    sys.path.insert(0, str(HERE))
    from startup import unpack

    if baseline is None:
        fork = subprocess.run(["git", "-C", str(ROOT), "merge-base", "HEAD", "main"], capture_output=True, text=True)
        baseline = fork.stdout.strip() or "main"
    samples: Samples = {"before": [], "after": []}
    with tempfile.TemporaryDirectory(prefix=prefix) as scratch:
        base = Path(scratch) / "before"
        base.mkdir()
        baseline_commit = unpack(baseline, base)
        trees = {"after": ROOT} if only_after else {"before": base, "after": ROOT}
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PTC_", "AGENT_HOST_", "PYTHON"))}
        for _ in range(rounds):
            for tree, path in trees.items():
                done = subprocess.run(
                    child(path.resolve()),
                    env=env | {"PYTHONPATH": str(path)},
                    cwd=scratch,
                    capture_output=True,
                    text=True,
                )
                if done.returncode != 0:
                    raise RuntimeError(f"{tree}: {done.stderr[-2000:]}")
                samples[tree].append(orjson.loads(done.stdout.strip().splitlines()[-1]))
    return samples, {"ref": baseline, "commit": baseline_commit}


def medians_of(samples: Samples) -> dict[str, dict[str, float]]:
    """Each figure's median over the rounds, per tree that ran."""
    return {
        tree: {key: statistics.median(s[key] for s in found) for key in found[0]}
        for tree, found in samples.items()
        if found
    }


def write_results(path: Path, what: str, rounds: int, baseline: dict[str, str], samples: Samples, **extra: Any) -> None:
    """The results document both benchmarks write (version 1): the trees compared, the machine, medians, samples."""
    from startup import dirty

    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    document = {
        "version": 1,
        "what": what,
        "rounds": rounds,
        **extra,
        "baseline": baseline,
        "after_tree": {"commit": head.stdout.strip(), "dirty": dirty()},
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "load": os.getloadavg()},
        "medians": medians_of(samples),
        "samples": samples,
    }
    path.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--baseline", help="the commit to compare with (default: where this branch left main)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--only-after", action="store_true", help="measure this checkout alone (while tuning)")
    options = parser.parse_args()
    if options.child:
        _child(options.child, options.calls)
        return

    def child(tree: Path) -> list[str]:
        return [sys.executable, str(Path(__file__).resolve()), "--child", str(tree), "--calls", str(options.calls)]

    samples, baseline = compare_trees(
        child, rounds=options.rounds, baseline=options.baseline, prefix="ptc-call-path-", only_after=options.only_after
    )
    medians = medians_of(samples)
    after = medians["after"]
    before: dict[str, Any] = medians.get("before", {})
    targets = [
        {
            "target": f"nested no-op call through the reference host <= {HOST_BOUND}x socketpair ping-pong",
            "before": before.get("host_ratio_to_socketpair"),
            "after": after["host_ratio_to_socketpair"],
            "met": after["host_ratio_to_socketpair"] <= HOST_BOUND,
        },
        {
            "target": f"1000 parallel 10 ms calls, max_parallel 16, through the host >= {PARALLEL_BOUND:.0%} of ideal",
            "before": before.get("parallel_host_efficiency"),
            "after": after["parallel_host_efficiency"],
            "met": after["parallel_host_efficiency"] >= PARALLEL_BOUND,
        },
    ]
    for key, value in after.items():
        print(f"{key:28} before {before.get(key, float('nan')):10.6f}  after {value:10.6f}")
    for target in targets:
        print(f"{'met' if target['met'] else 'NOT met':8} {target['target']}: {target['before']} -> {target['after']}")
    if options.only_after:
        return
    what = "seconds per call (wall), ratios within one child process, medians over rounds"
    write_results(RESULTS, what, options.rounds, baseline, samples, calls=options.calls, targets=targets)


if __name__ == "__main__":
    main()
