"""The llm plugin end to end: the real ``llm`` command line (click's ``CliRunner``) and the offline ``echo`` model.

The echo model (``llm-echo``) turns a JSON prompt into one round of tool calls,
then echoes what it got back, so each test reads the ``run_code`` result the
model would read. llm's state lives in ``LLM_USER_PATH`` under the test's
temporary directory; programs run unconfined (a user-level policy) so these
tests do not depend on bubblewrap.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import llm
import orjson
import pytest
from click.testing import CliRunner
from llm.cli import cli

from ptc_plus.doors.llm import plugin
from ptc_plus.doors.llm.chain_context import latest_conversation
from ptc_plus.doors.llm.host_tools import TOOL_SET
from ptc_plus.i18n import message
from tests.scaffolding import isolate_from_the_machine

USER_CONFIG = 'version = 1\n\n[runtime]\npolicy = "danger-full-access"\n'
MANAGED = "version = 1\n\n[management]\nenabled = true\nbudget_tokens = 8000\n"
PARALLEL = threading.Barrier(2, timeout=20)
"""Both arithmetic tools wait here: a program that did not run them at once would break it (and fail)."""


class TestTools:
    """An llm plugin registering the tools the programs call."""

    @llm.hookimpl  # type: ignore[misc]
    def register_tools(self, register: Any) -> None:
        def add(a: int, b: int) -> int:
            """Add two integers."""
            PARALLEL.wait()
            return a + b

        def multiply(a: int, b: int) -> int:
            """Multiply two integers."""
            PARALLEL.wait()
            return a * b

        def secret_tool() -> str:
            """A tool the workspace turned off."""
            return "never"

        def weather_forecast(city: str) -> dict[str, Any]:
            """Get the weather forecast for a city."""
            return {"city": city, "sky": "clear"}

        for function in (add, multiply, secret_tool, weather_forecast):
            register(function)


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A workspace as the current directory, llm and PTC Plus state under ``tmp_path``, the test tools loaded."""
    root = tmp_path / "workspace"
    root.mkdir()
    user = tmp_path / "xdg" / "ptc-plus" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text(USER_CONFIG, encoding="utf-8")
    isolate_from_the_machine(monkeypatch, tmp_path)
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "llm"))
    monkeypatch.setenv("PTC_LOCALE", "en")
    monkeypatch.chdir(root)
    monkeypatch.setattr(plugin, "_offered", {})
    llm.plugins.load_plugins()
    tools = TestTools()
    llm.plugins.pm.register(tools, name="ptc-plus-test-tools")
    PARALLEL.reset()
    try:
        yield root
    finally:
        llm.plugins.pm.unregister(tools)


def configure(workspace: Path, choices: dict[str, str]) -> None:
    text = MANAGED + "".join(f'\n[capabilities."{i}"]\ndisclosure = "{v}"\n' for i, v in choices.items())
    path = workspace / ".ptc-plus" / "config.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")


def run_llm(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def prompt(program: str, *extra: str) -> tuple[dict[str, Any], str]:
    """Have the echo model call ``run_code`` with ``program``; the run's result as the model read it, and the
    whole output."""
    call = {"name": "run_code", "arguments": {"description": "test", "code": program}}
    output = run_llm("-m", "echo", "-T", "run_code", *extra, json.dumps({"prompt": "go", "tool_calls": [call]}))
    return _run_result(output), output


def _run_result(output: str) -> dict[str, Any]:
    decoder = json.JSONDecoder()
    for start in [i for i, ch in enumerate(output) if ch == "{"]:
        try:
            echoed, _ = decoder.raw_decode(output[start:])
        except ValueError:
            continue
        if not isinstance(echoed, dict):
            continue
        for result in echoed.get("tool_results", []):
            if result["name"] == "run_code":
                text = result["output"].removeprefix("Error: ")
                first, _, rest = text.partition("\n\n")
                try:
                    return {**orjson.loads(first), "owed": rest}
                except orjson.JSONDecodeError:
                    return {"error": text}
    raise AssertionError(f"no run_code result in {output!r}")


def test_the_plugin_is_an_llm_entry_point() -> None:
    from importlib.metadata import entry_points

    assert [ep.value for ep in entry_points(group="llm", name="ptc_plus")] == ["ptc_plus.doors.llm.plugin"]


def test_run_code_calls_two_llm_tools_in_parallel_and_returns_an_aggregate(workspace: Path) -> None:
    program = (
        "import asyncio\n"
        "s, p = await asyncio.gather(tools.add(a=1, b=2), tools.multiply(a=3, b=4))\n"
        "return {'sum': s, 'product': p, 'total': s + p}"
    )
    result, _ = prompt(program)
    assert result["value"] == {"sum": 3, "product": 12, "total": 15}, result
    assert result["calls"] == 2


def test_the_plan_decides_what_programs_see_off_absent_on_demand_found_and_called(workspace: Path) -> None:
    configure(workspace, {"host:add": "full", "host:secret_tool": "off", "host:weather_forecast": "on-demand"})
    program = (
        "names = sorted(dir(tools))\n"
        "found = await capabilities.search('weather forecast for a city')\n"
        "sky = await tools.weather_forecast(city='Paris')\n"
        "return {'names': names, 'found': [m['identity'] for m in found['expanded']], 'sky': sky}"
    )
    result, _ = prompt(program)
    value = result["value"]
    assert "secret_tool" not in value["names"]
    assert "add" in value["names"]
    assert "host:weather_forecast" in value["found"]
    assert value["sky"] == {"city": "Paris", "sky": "clear"}
    tools = llm.get_tools()
    description = tools["run_code"].description or ""  # type: ignore[union-attr]
    assert "secret_tool" not in description
    assert "async def add(" in description  # full: its contract is in the catalog the model reads


def test_a_continued_conversation_keeps_its_frozen_plan_and_a_new_one_gets_the_new_config(workspace: Path) -> None:
    probe = "return sorted(dir(tools))"
    first, _ = prompt(probe)
    assert "secret_tool" in first["value"]
    configure(workspace, {"host:secret_tool": "off"})
    continued, _ = prompt(probe, "-c")
    assert "secret_tool" in continued["value"]  # frozen when the conversation began
    fresh, _ = prompt(probe)
    assert "secret_tool" not in fresh["value"]


def test_llm_capabilities_refresh_gives_the_receipt_and_changes_that_conversation_only(workspace: Path) -> None:
    probe = "return sorted(dir(tools))"
    prompt(probe)
    first = latest_conversation()
    prompt(probe)
    second = latest_conversation()
    assert first is not None and second is not None and first != second
    shown = run_llm("capabilities", "--cid", first)
    assert "Code mode is on" in shown
    configure(workspace, {"host:secret_tool": "off"})
    receipt = run_llm("capabilities", "refresh", "--cid", first)
    assert receipt.startswith("Refresh #1 applied:"), receipt
    again = run_llm("capabilities", "refresh", "--cid", first)
    assert again.strip() == message("ptc.refresh.unchanged", "en")
    refreshed, _ = prompt(probe, "--cid", first)
    assert "secret_tool" not in refreshed["value"]
    untouched, _ = prompt(probe, "--cid", second)
    assert "secret_tool" in untouched["value"]
    planned = run_llm("capabilities", "plan")  # ptc-plus capabilities plan, over llm's tools
    assert "host:secret_tool [off]" in planned and "host:weather_forecast" in planned
    searched = orjson.loads(run_llm("capabilities", "search", "secret", "--cid", first, "--json"))
    assert all(m["identity"] != "host:secret_tool" for m in searched["expanded"] + searched["not_expanded"])


def test_llm_capabilities_search_prints_the_list_ptc_plus_capabilities_search_prints(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompt("return 1")
    conversation = latest_conversation()
    assert conversation is not None
    listed = run_llm("capabilities", "search", "weather forecast for a city", "--cid", conversation)
    assert listed.startswith("1. host:weather_forecast  score "), listed
    assert "Get the weather forecast for a city." in listed
    found = orjson.loads(run_llm("capabilities", "search", "weather forecast for a city", "--json"))
    assert found["expanded"][0]["identity"] == "host:weather_forecast"
    from ptc_plus.cli import main

    # The same list as ptc-plus capabilities search over llm's tools (the conversation's plan is the workspace's).
    capsys.readouterr()
    assert main(["capabilities", "search", "weather forecast for a city", "--tools", TOOL_SET]) == 0
    assert capsys.readouterr().out == listed


@pytest.mark.parametrize("identity", ["host:llm_time", "host:weather_forecast"])
def test_llm_capabilities_set_knows_llm_s_own_tools(workspace: Path, identity: str) -> None:
    result = CliRunner().invoke(cli, ["capabilities", "set", identity, "off"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "is now off" in result.output and "not in this workspace's current catalog" not in result.output


def test_llm_capabilities_set_of_a_misspelt_identity_suggests_llm_s_tool(workspace: Path) -> None:
    result = CliRunner().invoke(cli, ["capabilities", "set", "host:weather_forecst", "off"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "not in this workspace's current catalog" in result.output
    assert "Did you mean 'host:weather_forecast'?" in result.output


def test_capabilities_of_a_conversation_that_never_used_ptc_fails_with_its_code(workspace: Path) -> None:
    result = CliRunner().invoke(cli, ["capabilities", "--cid", "01nonexistent"])
    assert result.exit_code == 1
    assert "PTC-7204" in result.output


def test_ta_asks_for_each_nested_call_and_a_refusal_is_a_tool_call_error(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # llm reads a piped stdin as the prompt, so the person's answers come from here: yes to run_code, no after.
    answers = iter([True, False])
    monkeypatch.setattr(click, "confirm", lambda *args, **kwargs: next(answers))
    program = (
        "try:\n"
        "    await tools.secret_tool()\n"
        "except ToolCallError as error:\n"
        "    return {'refused': str(error)}\n"
        "return {'refused': None}"
    )
    result, output = prompt(program, "--ta")
    assert output.index("Tool call: run_code(") < output.index("Tool call: secret_tool({})")
    assert "PTC-7202" in result["value"]["refused"], result
    assert next(answers, None) is None  # asked exactly twice


def test_td_shows_nested_calls_with_their_results(workspace: Path) -> None:
    result, output = prompt("return await tools.secret_tool()", "--td")
    assert result["value"] == "never"
    nested = output.index("Tool call: secret_tool({})")
    assert nested < output.index("Tool call: run_code(")  # the nested call settles before its outer call


def test_the_conversation_is_the_family_in_the_usage_statistics(workspace: Path) -> None:
    configure(workspace, {"host:add": "full"})
    store = workspace / ".ptc-plus" / "statistics.json"

    def families() -> list[Any]:
        return list(orjson.loads(store.read_bytes())["families"])

    prompt("return await tools.secret_tool()")
    assert len(families()) == 1
    prompt("return await tools.secret_tool()", "-c")  # the same conversation: its sample is revised
    assert len(families()) == 1
    prompt("return await tools.secret_tool()")  # a new conversation: a new family
    assert len(families()) == 2


def test_a_prompt_without_ptc_tools_opens_no_session_and_continuing_without_t_keeps_them(
    workspace: Path, tmp_path: Path
) -> None:
    run_llm("-m", "echo", "hello")
    sessions = tmp_path / "llm" / "ptc-plus" / "sessions"
    assert not sessions.exists() or list(sessions.iterdir()) == []
    prompt("return 1")
    assert len(list(sessions.iterdir())) == 1
    call = {"name": "run_code", "arguments": {"description": "again", "code": "return 2"}}
    output = run_llm("-m", "echo", "-c", json.dumps({"prompt": "go", "tool_calls": [call]}))  # llm restores -T
    assert _run_result(output)["value"] == 2
    assert len(list(sessions.iterdir())) == 1
