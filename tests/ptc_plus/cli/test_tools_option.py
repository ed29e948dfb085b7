"""``--tools`` means for ``sdk`` and ``capabilities plan|search`` what it means for ``exec``: every form, own tools."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.cli_runner import CliRunner

SCHEMA = {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}
DESCRIPTION = "Look a word up in the glossary."
FACTORY = textwrap.dedent(
    """
    from hookspecs import ToolDefinition, ToolSpec

    async def lookup(arguments, context):
        return arguments["word"]

    def make_tools(workspace):
        spec = ToolSpec(name="glossary_lookup", description=%r, input_schema=%r)
        return [ToolDefinition(spec=spec, handler=lookup)]
    """
) % (DESCRIPTION, SCHEMA)


def _mcp(directory: Path) -> str:
    tool = {"name": "glossary_lookup", "description": DESCRIPTION, "inputSchema": SCHEMA}
    (directory / "mcp.json").write_bytes(orjson.dumps({"tools": [tool]}))
    return "mcp.json"


def _openai(directory: Path) -> str:
    function = {"name": "glossary_lookup", "description": DESCRIPTION, "parameters": SCHEMA}
    (directory / "openai.json").write_bytes(orjson.dumps([{"type": "function", "function": function}]))
    return "openai.json"


def _factory(directory: Path) -> str:
    (directory / "my_glossary_tools.py").write_text(FACTORY, encoding="utf-8")
    return "my_glossary_tools:make_tools"


FORMS: dict[str, Callable[[Path], str]] = {"mcp-file": _mcp, "openai-file": _openai, "factory": _factory}


def _identities(command: str, document: dict[str, Any]) -> set[str]:
    if command == "plan":
        return {entry["identity"] for entry in document["plan"]["entries"]}
    return {match["identity"] for match in [*document["expanded"], *document["not_expanded"]]}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's project, the current directory: no PYTHONPATH, no demo tools."""
    monkeypatch.delenv("PYTHONPATH", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("command", ["plan", "search"])
def test_capabilities_plan_over_the_users_own_tools(form: str, command: str, project: Path, run_cli: CliRunner) -> None:
    tools = FORMS[form](project)
    argv = ["capabilities", "plan"] if command == "plan" else ["capabilities", "search", "glossary word"]
    done = run_cli(*argv, "--tools", tools, "--json")
    assert done.code == 0, done.err
    identities = _identities(command, done.json())
    assert "host:glossary_lookup" in identities
    assert not any(identity.endswith(":read_file") for identity in identities), "the demo tools stayed out"


@pytest.mark.parametrize("form", sorted(FORMS))
def test_sdk_renders_every_form(form: str, project: Path, run_cli: CliRunner) -> None:
    done = run_cli("sdk", "--tools", FORMS[form](project), "--json")
    assert done.code == 0, done.err
    document = done.json()
    assert document["tools"] == 1 and "async def glossary_lookup(" in document["text"]


def test_the_plan_names_the_tool_set_it_planned_over(project: Path, run_cli: CliRunner) -> None:
    done = run_cli("capabilities", "plan", "--tools", _mcp(project))
    assert done.code == 0 and "tools: mcp.json" in done.out.splitlines()[0]


@pytest.mark.parametrize("command", [["sdk"], ["capabilities", "plan"], ["capabilities", "search", "x"]])
def test_an_unloadable_tool_set_is_a_usage_error(command: list[str], project: Path, run_cli: CliRunner) -> None:
    done = run_cli(*command, "--tools", "no_such_module_here:make")
    assert done.code == 2 and "PTC-3005" in done.err
