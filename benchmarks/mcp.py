"""MCP both ways: a nested call to an upstream MCP tool, and ``run_code`` served over MCP (issue 13).

Run: .venv/bin/python benchmarks/mcp.py [--quick]
Writes benchmarks/results/mcp.json. Every figure is a ratio against a baseline
measured in the same run on the same machine, the upstream server being
``mcp-server-time`` (``get_current_time``) in both:

(a) the per-call cost of a nested call to an upstream MCP tool from a program
    (``run_code`` on the reference host with the plugin, the server configured in
    the user file: guard, plan, lanes, the hub's background loop and the stdio
    round trip), from the difference between a program making N sequential
    calls and one making none, vs the same call from a plain ``mcp.Client``;
(b) end to end over ``ptc-plus mcp-serve``: a client's ``tools/call run_code``
    with a trivial program, and with a program making one nested upstream call,
    vs a plain ``mcp.Client`` calling the upstream tool itself, and the trivial
    call vs the same program run on the in-process host (what serving adds).

Programs run under the policy a user gets by default (``workspace-write`` when
bubblewrap is available), unless ``--policy`` says otherwise.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as a script, this file's directory comes first on sys.path, where this file's own name would shadow the SDK.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse  # noqa: E402
import asyncio  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Awaitable, Callable  # noqa: E402
from typing import Any  # noqa: E402

import orjson  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "mcp.json"
BIN = Path(sys.executable).parent
TIME_SERVER = str(BIN / "mcp-server-time")
TIME_ARGS = ["--local-timezone", "UTC"]
CALL = ("get_current_time", {"timezone": "UTC"})


def user_config(policy: str | None) -> str:
    runtime = f'[runtime]\npolicy = "{policy}"\n\n' if policy else ""
    args = ", ".join(f'"{a}"' for a in TIME_ARGS)
    return f'version = 1\n\n{runtime}[mcp.servers.time]\ncommand = "{TIME_SERVER}"\nargs = [{args}]\n'


def program(calls: int) -> str:
    return f"for _ in range({calls}):\n    await tools.get_current_time(timezone='UTC')\nreturn {calls}"


async def timed(action: Callable[[], Awaitable[Any]], repeat: int) -> list[float]:
    """Seconds per run of ``action``, ``repeat`` times (after one warm-up)."""
    await action()
    seconds = []
    for _ in range(repeat):
        start = time.perf_counter()
        await action()
        seconds.append(time.perf_counter() - start)
    return seconds


async def plain_client(calls: int) -> float:
    """Median seconds of one ``tools/call`` from a plain client to the upstream server."""
    async with Client(StdioServerParameters(command=TIME_SERVER, args=TIME_ARGS), mode="legacy") as client:

        async def one() -> None:
            result = await client.call_tool(*CALL)
            assert not result.is_error

        return statistics.median(await timed(one, calls))


async def nested_through_run_code(workspace: Path, calls: int, rounds: int) -> dict[str, float]:
    """Per nested call: (a program making ``calls`` calls - one making none) / ``calls``, median of ``rounds``."""
    from hookspecs.reference import ReferenceHost

    with tempfile.TemporaryDirectory(prefix="ptc-bench-mcp-") as state:
        async with ReferenceHost(workspace=workspace, state_dir=Path(state), user_id="bench") as host:
            session = await host.start_session(title="benchmark")

            async def run(n: int) -> None:
                result = await session.call_tool("run_code", {"description": "bench", "code": program(n)})
                assert result.ok, result.error

            empty = await timed(lambda: run(0), rounds)
            full = await timed(lambda: run(calls), rounds)
    per_call = (statistics.median(full) - statistics.median(empty)) / calls
    return {"empty_run_seconds": statistics.median(empty), "per_nested_call_seconds": per_call}


async def over_mcp_serve(workspace: Path, rounds: int) -> dict[str, float]:
    """Median seconds of ``tools/call run_code`` through ``ptc-plus mcp-serve``: trivial, and one nested call."""
    params = StdioServerParameters(
        command=str(BIN / "ptc-plus"), args=["mcp-serve", "--workspace", str(workspace)], env=dict(os.environ)
    )
    async with Client(params, mode="legacy", read_timeout_seconds=120) as client:

        async def run(code: str) -> None:
            result = await client.call_tool("run_code", {"description": "bench", "code": code})
            assert not result.is_error, result.content

        trivial = await timed(lambda: run("return 1"), rounds)
        one_call = await timed(lambda: run(program(1)), rounds)
    return {"trivial_seconds": statistics.median(trivial), "one_nested_call_seconds": statistics.median(one_call)}


async def main(quick: bool, policy: str | None) -> dict[str, Any]:
    calls, rounds = (20, 5) if quick else (200, 15)
    with tempfile.TemporaryDirectory(prefix="ptc-bench-mcp-home-") as home:
        config = Path(home) / "xdg" / "ptc-plus" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text(user_config(policy), encoding="utf-8")
        for key in [k for k in os.environ if k.startswith("PTC_")]:
            del os.environ[key]
        os.environ["XDG_CONFIG_HOME"] = str(config.parent.parent)
        workspace = Path(home) / "workspace"
        workspace.mkdir()
        baseline = await plain_client(calls)
        nested = await nested_through_run_code(workspace, calls, rounds)
        served = await over_mcp_serve(workspace, rounds)
    return {
        "version": 1,
        "benchmark": "mcp",
        "quick": quick,
        "policy": policy or "default",
        "nested_calls_per_program": calls,
        "rounds": rounds,
        "plain_client_call_seconds": baseline,
        "nested": nested,
        "served": served,
        "ratios": {
            "(a) nested MCP call through run_code / plain mcp.Client call": nested["per_nested_call_seconds"]
            / baseline,
            "(b) trivial run_code over mcp-serve / plain mcp.Client call": served["trivial_seconds"] / baseline,
            "(b) trivial run_code over mcp-serve / the same run on the in-process host": served["trivial_seconds"]
            / nested["empty_run_seconds"],
            "(b) run_code with one nested MCP call over mcp-serve / plain mcp.Client call": served[
                "one_nested_call_seconds"
            ]
            / baseline,
        },
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke run)")
    parser.add_argument(
        "--policy", choices=["read-only", "workspace-write", "danger-full-access"], default=None, help="sandbox policy"
    )
    options = parser.parse_args()
    results = asyncio.run(main(options.quick, options.policy))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_bytes(orjson.dumps(results, option=orjson.OPT_INDENT_2) + b"\n")
    print(orjson.dumps(results, option=orjson.OPT_INDENT_2).decode())
