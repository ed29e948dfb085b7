"""``ptc-plus exec --tools``: the same reading as every command (ADR 0064), seen from a program."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson

from tests.cli_runner import CliRunner

CLI = str(Path(sys.executable).with_name("ptc-plus"))
SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
OPENAI_TOOLS = [
    {"type": "function", "function": {"name": "lookup", "description": "Look a word up.", "parameters": SCHEMA}}
]


def test_a_tools_file_gives_contracts_and_a_call_fails_with_a_typed_error(
    workspace: Path, tmp_path: Path, run_cli: CliRunner
) -> None:
    tools = tmp_path / "tools.json"
    tools.write_bytes(orjson.dumps({"tools": OPENAI_TOOLS}))
    program = (
        "found = await capabilities.find('look up a word')\n"
        "names = [m['name'] for m in found['matches']]\n"
        "try:\n"
        "    await tools.lookup(q='x')\n"
        "except ToolCallError as error:\n"
        "    return {'names': names, 'tool': error.tool_name, 'code': error.code, 'message': str(error)}\n"
    )
    argv = ["--workspace", str(workspace), "--tools", str(tools), "--policy", "danger-full-access", "--json"]
    done = run_cli("exec", *argv, stdin=program)
    assert done.code == 0, done.out
    value = done.json()["value"]
    assert value["names"] == ["lookup"] and value["tool"] == "lookup" and value["code"] == "PTC-3003"
    assert "no implementation" in value["message"]
    [said] = [line for line in done.err.splitlines() if line.startswith("tools:")]
    assert "contracts only" in said and "PTC-3003" in said


def test_a_factory_is_found_in_the_current_directory_without_pythonpath(tmp_path: Path) -> None:
    """The installed console script's ``sys.path`` starts at ``.venv/bin``; the user's module is in the cwd."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "my_exec_tools.py").write_text(
        "from hookspecs import tool\n"
        "\n"
        "def make_tools(workspace):\n"
        "    @tool('shout', description='Upper-case a text.',\n"
        "          input_schema={'type': 'object', 'properties': {'text': {'type': 'string'}}})\n"
        "    async def shout(arguments, context):\n"
        "        return arguments['text'].upper()\n"
        "    return [shout]\n"
    )
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    argv = [CLI, "exec", "--tools", "my_exec_tools:make_tools", "--policy", "danger-full-access", "--json"]
    done = subprocess.run(
        argv, input="return await tools.shout(text='hi')", capture_output=True, text=True, cwd=project, env=env,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    shape = orjson.loads(done.stdout)
    assert shape["value"] == "HI" and shape["calls"] == 1
