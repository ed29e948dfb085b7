"""The per-call path's parts the ADR 0123 cuts touch, before and after, in-process (issue 32 item 2).

Each round runs one child process per source tree (``before``: ``git archive`` of ``--baseline``, default
``git merge-base HEAD main``; ``after``: this checkout), in alternation: the loop and the results document of
``call_path.py`` (``compare_trees``, ``write_results``), which both benchmarks share. A child builds the reference host
(no entry points) with a no-op tool whose input schema has one integer property, and times with
``timeit`` (the minimum of 7 repeats of 20,000 calls, which a loaded machine inflates least):

- ``seams_us``: the guard and result seams of one call (``HookFacade.guard`` + ``HookFacade.tool_result``,
  the host's own plain implementations registered);
- ``validation_us``: validating one call's valid arguments as the dispatcher does (the view's compiled
  validator after ADR 0123; the schema looked up by its content before).

It also counts the Python function calls per sequential nested call of ``call_path._pipeline_cpu``
(``cProfile``; the difference of 2,000 and 1,000 calls, over 1,000), a figure independent of the load.
Medians over ``--rounds``.

Run: ``.venv/bin/python benchmarks/call_path_parts.py [--rounds 3]`` → benchmarks/results/call_path_parts.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results" / "call_path_parts.json"

CHILD = r"""
import asyncio, cProfile, pstats, sys, tempfile, timeit, pathlib
sys.path.insert(0, sys.argv[2])
import orjson
from hookspecs import AgentRef, ToolCall, ToolDefinition, ToolSpec
from hookspecs.types import ResultStatus, ToolResult
from hookspecs.reference import ReferenceHost, registry
assert registry.__file__.startswith(sys.argv[1] + "/"), registry.__file__
import call_path
d = pathlib.Path(tempfile.mkdtemp())
async def handler(arguments, context):
    return None
spec = ToolSpec(name="noop", description="n", input_schema={"type": "object", "properties": {"n": {"type": "integer"}}})
definition = ToolDefinition(spec=spec, handler=handler)
host = ReferenceHost(workspace=d, state_dir=d / "s", tools=[definition], load_entry_points=False)
facade, services = host.facade, host.services
agent = AgentRef(session_id="s", agent_id="a", family_id="s")
call = ToolCall(call_id="c", tool="noop", arguments={"n": 1}, caller=agent, parent_call_id="p")
result = ToolResult(call_id="c", tool="noop", status=ResultStatus.OK, value=None)
view = registry.ToolView([definition])
if hasattr(view, "validator"):
    compiled = view.validator("noop")
    validate = lambda: registry.validation_errors(spec, call.arguments, compiled)
else:
    validate = lambda: registry.validation_errors(spec, call.arguments)
seams = lambda: (facade.guard(call, spec, services), facade.tool_result(call, result, services))
n = 20000
figures = {
    "seams_us": min(timeit.repeat(seams, number=n, repeat=7)) / n * 1e6,
    "validation_us": min(timeit.repeat(validate, number=n, repeat=7)) / n * 1e6,
}
asyncio.run(call_path._pipeline_cpu(100, 1))
counts = []
for calls in (1000, 2000):
    profile = cProfile.Profile()
    profile.enable()
    asyncio.run(call_path._pipeline_cpu(calls, 1))
    profile.disable()
    counts.append(sum(s[1] for s in pstats.Stats(profile).stats.values()))
figures["python_calls_per_nested_call"] = (counts[1] - counts[0]) / 1000
print(orjson.dumps(figures).decode())
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", help="the commit to compare with (default: where this branch left main)")
    options = parser.parse_args()
    from call_path import compare_trees, medians_of, write_results  # the loop both call-path benchmarks share

    samples, baseline = compare_trees(
        lambda tree: [sys.executable, "-c", CHILD, str(tree), str(HERE)],
        rounds=options.rounds,
        baseline=options.baseline,
        prefix="ptc-call-parts-",
    )
    medians = medians_of(samples)
    for key in medians["after"]:
        print(f"{key:30} before {medians['before'][key]:9.2f}  after {medians['after'][key]:9.2f}")
    what = "microseconds per call (timeit minimum of 7x20,000) and Python calls per nested call, medians"
    write_results(RESULTS, what, options.rounds, baseline, samples)


if __name__ == "__main__":
    main()
