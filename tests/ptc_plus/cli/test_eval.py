"""``ptc-plus eval``: its errors, a tiny scripted matrix end to end, and real-model mode against a fake server.

The suite here is a one-task package written into ``tmp_path`` (not the real
``benchmarks/tasks``): the command is tested, not the measured tasks.
"""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

import orjson
import pytest

from ptc_plus.evaluation import charts, results
from ptc_plus.evaluation.prices import HALF_CACHE
from ptc_plus.evaluation.task import Style
from tests.cli_runner import CliRunner
from tests.ptc_plus.cli.test_chat import CLI, PLANTED_KEY, FakeOpenAI, completion

TINY_SUITE = '''
"""A one-task suite: double 21 (and a warm-up that doubles 5)."""

from __future__ import annotations

from .tools import World, filler, tools
from ptc_plus.evaluation.task import Suite, Task, Verdict
from ptc_plus.evaluation.task_plan import Ref, Step, TaskPlan, Turn


def _nothing(workspace, world):
    pass


def _answer(values):
    return f"It is {values[0]}."


def _task(ident, n):
    prompt = f"What is twice {n}?"

    def oracle(answer, end):
        if str(2 * n) not in answer:
            return Verdict(passed=False, reason=f"{2 * n} is missing")
        if end.world.calls != 1:
            return Verdict(passed=False, reason=f"double ran {end.world.calls} times")
        return Verdict(passed=True)

    step = Step(id="double", need="double a number", tool="double", arguments={"n": n})
    plan = TaskPlan(turns=(Turn(prompt=prompt, steps=(step,), reads=(Ref("double", ("value",)),), answer=_answer),))
    return Task(id=ident, category="one-call", prompt=prompt, setup=_nothing, oracle=oracle, plan=plan)


SUITE = Suite(
    version="tiny-1", tasks=(_task("double-21", 21),), warmup=(_task("double-5", 5),),
    world=lambda workspace: World(), tools=tools, filler=filler,
)
'''

TINY_TOOLS = """
from __future__ import annotations

from hookspecs.services import tool
from hookspecs.types import ToolSpec


class World:
    def __init__(self):
        self.calls = 0


def tools(workspace, world):
    @tool(
        "double",
        description="Double a number.",
        input_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    )
    async def double(arguments, context):
        world.calls += 1
        return {"value": 2 * arguments["n"]}

    return [double]


def filler(n):
    return [ToolSpec(name=f"filler_{i}", description=f"Filler tool number {i}.") for i in range(n)]
"""


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    path = tmp_path / "tiny"
    path.mkdir()
    (path / "__init__.py").write_text(textwrap.dedent(TINY_SUITE), encoding="utf-8")
    (path / "tools.py").write_text(textwrap.dedent(TINY_TOOLS), encoding="utf-8")
    return path


def test_a_missing_tasks_directory_is_a_usage_error_in_both_locales(
    run_cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "nowhere"
    result = run_cli("eval", "--tasks", str(missing), "--out", str(tmp_path / "out"))
    assert result.code == 2
    assert f"ptc-plus: PTC-7420: no task suite at {missing}" in result.err
    assert not (tmp_path / "out").exists()

    monkeypatch.setenv("PTC_LOCALE", "zh")
    result = run_cli("eval", "--tasks", str(missing))
    assert result.code == 2
    assert f"PTC-7420: {missing} 处没有任务集" in result.err


def test_a_broken_suite_says_why(run_cli: CliRunner, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "__init__.py").write_text("raise RuntimeError('half written')\n", encoding="utf-8")
    result = run_cli("eval", "--tasks", str(broken), "--json")
    assert result.code == 1
    error = orjson.loads(result.out)["error"]
    assert error["code"] == "PTC-7421"
    assert "RuntimeError: half written" in error["message"]

    (broken / "__init__.py").write_text("SUITE = 3\n", encoding="utf-8")
    result = run_cli("eval", "--tasks", str(broken))
    assert result.code == 1
    assert "PTC-7421" in result.err and "SUITE is int, not a Suite" in result.err


def test_an_unknown_task_and_model_options_without_a_model_are_usage_errors(run_cli: CliRunner, suite: Path) -> None:
    result = run_cli("eval", "--suite", "ours", "--tasks", str(suite), "--task", "nope")
    assert result.code == 2
    assert "PTC-7422: no task nope in the suite (tasks: double-21)" in result.err
    result = run_cli("eval", "--suite", "ours", "--tasks", str(suite), "--repeat", "3")
    assert result.code == 2
    assert "PTC-7423: --repeat is for real-model mode" in result.err
    for option, value in (("--prices", "cheapest"), ("--host-prompt", "1k")):
        result = run_cli("eval", "--suite", "ours", "--tasks", str(suite), option, value)
        assert result.code == 2, result.err
        assert value in result.err


def eval_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The installed ``ptc-plus eval`` (the MCP time server it starts needs real standard streams)."""
    return subprocess.run([CLI, "eval", *args], capture_output=True, text=True, timeout=240, check=False)


def test_a_tiny_scripted_matrix_writes_results_and_readme(suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    result = eval_cli(
        "--suite", "ours", "--tasks", str(suite), "--catalog", "30", "--out", str(out), "--json",
        "--prices", "half-cache", "--host-prompt", "15k",
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    document = orjson.loads(result.stdout)
    assert document["runs"] == len(Style) and document["failed"] == []
    assert document["report"] == str(out / "README.md")

    measured = results.read(out / "results.json")
    assert measured.suite_version == "tiny-1"
    assert measured.catalogs == (30,)
    assert measured.unit == "o200k tokens (counted per request part)"
    assert (measured.prices, measured.host_prompt, measured.host_prompt_tokens) == (HALF_CACHE, "15k", 15000)
    assert measured.min_cacheable_prefix == 1024
    assert [(r.style, r.catalog) for r in measured.runs] == [(s.value, 30) for s in Style]
    for record in measured.runs:
        assert record.passed, record
        assert record.total == (record.input_cached or 0) + (record.input_uncached or 0) + (record.output or 0)
        assert record.requests >= 2
        assert (record.first_request_input or 0) > 15000  # the host prompt is in every request, the first too
        assert record.input_written is not None
    by_style = {r.style: r for r in measured.runs}
    # Native sends all 30 schemas up front; tool search only its search tool.
    assert (by_style["native"].first_request_input or 0) > (by_style["tool-search"].first_request_input or 0)

    readme = (out / "README.md").read_text(encoding="utf-8")
    assert "## Catalog of 30 tools" in readme
    assert (
        f"ptc-plus eval --catalog 30 --out {out} --tasks {suite} --suite ours --prices half-cache --host-prompt 15k"
        in readme
    )
    assert "### Cost-weighted (price sheet `half-cache`)" in readme
    assert "| double-21 | one-call |" in readme


def test_real_model_mode_meters_the_providers_usage_and_never_writes_the_key(
    suite: Path, tmp_path: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "double", "arguments": '{"n": 21}'}}
    detailed = {"prompt_tokens": 50, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 20}}
    plain = {"prompt_tokens": 60, "completion_tokens": 4}  # no cached count: the split stays unknown
    for _ in range(2):  # two repetitions, two requests each
        server.replies.append(("json", 200, completion(None, [call], usage=detailed)))
        server.replies.append(("json", 200, completion("It is 42.", usage=plain)))
    monkeypatch.setenv("EVAL_KEY", PLANTED_KEY)
    out = tmp_path / "real"
    result = eval_cli(
        "--suite",
        "ours",
        "--tasks",
        str(suite),
        "--style",
        "native",
        "--catalog",
        "20",
        "--model",
        "m-1",
        "--base-url",
        server.url,
        "--api-key-env",
        "EVAL_KEY",
        "--repeat",
        "2",
        "--out",
        str(out),
    )
    assert result.returncode == 0, result.stderr
    assert len(server.requests) == 4
    assert server.requests[0]["model"] == "m-1"
    assert server.headers[0]["authorization"] == f"Bearer {PLANTED_KEY}"

    measured = results.read(out / "results.json")
    assert (measured.mode, measured.model, measured.repetitions) == ("model", "m-1", 2)
    assert measured.unit == "provider-reported tokens"
    assert [r.repetition for r in measured.runs] == [0, 1]
    for record in measured.runs:
        assert record.passed
        assert record.requests == 2
        assert record.input_cached is None and record.input_uncached is None  # the second request did not say
        assert record.output == 7 + 4
        # The prompt totals were reported (50, 60) though one split was not: the total is known.
        assert record.total == 50 + 60 + 7 + 4
        assert record.first_request_input == 50

    readme = (out / "README.md").read_text(encoding="utf-8")
    assert "| native | unknown | unknown | 11 | 121 | unknown | 2 | 1 | 0 | 0 |" in readme  # no split: no bill
    assert "## Spread over repetitions" in readme
    assert "--api-key-env EVAL_KEY" in readme
    for path in out.iterdir():
        assert PLANTED_KEY.encode() not in path.read_bytes(), path
    assert PLANTED_KEY not in result.stdout + result.stderr


def test_real_model_mode_without_usage_writes_its_report_with_unknown_cells(
    suite: Path, tmp_path: Path, server: FakeOpenAI
) -> None:
    """A provider that reports no usage at all (issue 30 item 3): the report is written, every count unknown."""
    call = {"id": "call_1", "type": "function", "function": {"name": "double", "arguments": '{"n": 21}'}}
    server.replies.append(("json", 200, completion(None, [call])))  # no "usage" key at all
    server.replies.append(("json", 200, completion("It is 42.")))
    out = tmp_path / "no-usage"
    result = eval_cli(
        "--suite", "ours", "--tasks", str(suite), "--style", "native", "--catalog", "20", "--model", "m-1",
        "--base-url", server.url, "--out", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "PTC-1000" not in result.stdout + result.stderr
    measured = results.read(out / "results.json")
    (record,) = measured.runs
    assert record.passed and record.requests == 2
    assert (record.input_cached, record.input_uncached, record.output, record.total) == (None, None, None, None)
    assert record.first_request_input is None
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert "| native | unknown | unknown | unknown | unknown | unknown | 2 | 1 | 0 | 0 |" in readme
    if charts.available():  # the charts of token counts are left out, not drawn from zeros
        assert readme.count("not drawn: every value it would show is unknown") == 2
        assert (out / charts.REQUESTS_PNG).is_file()
    # The host prompt was sent to the provider, before the host's own system text.
    system = server.requests[0]["messages"][0]["content"]
    assert system.startswith("You are a software engineering agent") and "You are an agent working in" in system


def test_counts_do_not_depend_on_tmpdir(suite: Path, tmp_path: Path) -> None:
    """Two runs under TMPDIRs of different lengths (as two users' machines have): identical counts."""
    measured = []
    for name in ("t", "a-much-longer-temporary-directory-of-another-user"):
        tmpdir = tmp_path / name
        tmpdir.mkdir()
        out = tmp_path / f"out-{name}"
        env = {**os.environ, "TMPDIR": str(tmpdir)}
        args = [
            "eval",
            "--suite",
            "ours",
            "--tasks",
            str(suite),
            "--style",
            "native",
            "--style",
            "ptc",
            "--catalog",
            "20",
        ]
        result = subprocess.run(
            [CLI, *args, "--out", str(out)], capture_output=True, text=True, timeout=240, check=False, env=env
        )
        assert result.returncode == 0, result.stdout + result.stderr
        measured.append(results.read(out / "results.json").runs)
    assert measured[0] == measured[1]
    assert all(run.passed and run.total for run in measured[0])
