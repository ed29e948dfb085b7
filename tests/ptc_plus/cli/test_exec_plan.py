"""``ptc-plus exec`` plans its session like any other (ADR 0092, issue 29 item 5).

The workspace's ``[capabilities]`` choices apply (``off`` absent, ``on-demand``
found through ``capabilities.find``), the configured and allowed MCP servers
are sources (a real fixture server over stdio), ``--tools mcp:NAME`` names a
server (not a ``module:factory``), ``--no-sources`` leaves them out, and no
empty state directory is left in the user's project.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ptc_plus.capabilities import cost
from tests.cli_runner import CliRunner

FIXTURE = Path(__file__).parents[1] / "adapters" / "mcp_fixture_server.py"
UNCONFINED = ["--policy", "danger-full-access"]


def _user_server(tmp_path: Path) -> None:
    user = tmp_path / "xdg" / "ptc-plus" / "config.toml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(
        f'[mcp.servers.fixture]\ncommand = "{sys.executable}"\nargs = ["{FIXTURE}"]\ntimeout_s = 60\n', "utf-8"
    )


def _set(run_cli: CliRunner, workspace: Path, identity: str, mode: str) -> None:
    done = run_cli("capabilities", "set", identity, mode, "--workspace", str(workspace))
    assert done.code == 0, done.err


def test_an_off_host_tool_is_absent_from_exec(run_cli: CliRunner, workspace: Path) -> None:
    _set(run_cli, workspace, "host:write_file", "off")
    program = "await tools.write_file(path='made.txt', content='hi')\n"
    done = run_cli("exec", "--tools", "demo", "--workspace", str(workspace), *UNCONFINED, "--json", stdin=program)
    assert done.code == 1, done.out + done.err
    assert "No tool named 'write_file' in tools" in done.json()["error"]["message"]
    assert not (workspace / "made.txt").exists()
    assert run_cli("exec", "--tools", "demo", "--workspace", str(workspace), *UNCONFINED, stdin="1").code == 0


def test_configured_mcp_servers_are_sources_and_no_sources_leaves_them_out(
    run_cli: CliRunner, workspace: Path, tmp_path: Path
) -> None:
    _user_server(tmp_path)
    program = "return (await tools.add(a=2, b=3))['total']\n"
    done = run_cli("exec", "--workspace", str(workspace), *UNCONFINED, "--json", stdin=program)
    assert done.code == 0, done.out + done.err
    assert done.json()["value"] == 5
    left_out = run_cli("exec", "--no-sources", "--workspace", str(workspace), *UNCONFINED, "--json", stdin=program)
    assert left_out.code == 1 and left_out.json()["ok"] is False
    assert "tools: none" in left_out.err


def test_tools_mcp_name_names_a_configured_server_not_a_module(
    run_cli: CliRunner, workspace: Path, tmp_path: Path
) -> None:
    _user_server(tmp_path)
    program = "return (await tools.add(a=1, b=1))['total']\n"
    done = run_cli(
        "exec", "--tools", "mcp:fixture", "--workspace", str(workspace), *UNCONFINED, "--json", stdin=program
    )
    assert done.code == 0, done.out + done.err
    assert done.json()["value"] == 2
    unknown = run_cli("exec", "--tools", "mcp:time", "--workspace", str(workspace), *UNCONFINED, stdin=program)
    assert unknown.code == 2
    assert "no MCP server 'time' is configured and allowed here (servers: fixture" in unknown.err
    assert "module" not in unknown.err.lower()


def test_an_on_demand_mcp_tool_is_found_through_discovery_and_an_off_one_is_not(
    run_cli: CliRunner, workspace: Path, tmp_path: Path
) -> None:
    _user_server(tmp_path)
    _set(run_cli, workspace, "mcp:fixture/add", "on-demand")
    _set(run_cli, workspace, "mcp:fixture/describe", "off")
    program = (
        "added = [m['name'] for m in (await capabilities.find('add two integers'))['matches']]\n"
        "described = [m['name'] for m in (await capabilities.find('describe a word'))['matches']]\n"
        "try:\n"
        "    await tools.describe(word='x')\n"
        "    off = 'called'\n"
        "except AttributeError as error:\n"
        "    off = str(error)\n"
        "return {'added': added, 'described': described, 'sum': (await tools.add(a=4, b=5))['total'], 'off': off}\n"
    )
    done = run_cli("exec", "--workspace", str(workspace), *UNCONFINED, "--json", stdin=program)
    assert done.code == 0, done.out + done.err
    value = done.json()["value"]
    assert "add" in value["added"] and "describe" not in value["described"]
    assert value["sum"] == 9 and "No tool named 'describe'" in value["off"]


@pytest.fixture
def encodings_built(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Each build of the ``o200k_base`` encoding in this test, counted (the offline counter starts unbuilt)."""
    built: list[int] = []
    real = cost.o200k_encoding

    def counted() -> object:
        built.append(1)
        return real()

    cost.offline_counter.cache_clear()
    monkeypatch.setattr(cost, "o200k_encoding", counted)
    yield built
    cost.offline_counter.cache_clear()


def test_exec_without_tools_builds_no_tokenizer_and_with_tools_does(
    run_cli: CliRunner, workspace: Path, encodings_built: list[int]
) -> None:
    """A plan with nothing to measure loads no vocabulary (0.6 CPU-s of every such start, ADR 0101)."""
    done = run_cli("exec", "--workspace", str(workspace), *UNCONFINED, "--json", stdin="return 1\n")
    assert done.code == 0 and done.json()["value"] == 1, done.out + done.err
    assert encodings_built == []
    done = run_cli("exec", "--tools", "demo", "--workspace", str(workspace), *UNCONFINED, "--json", stdin="1")
    assert done.code == 0, done.out + done.err
    assert encodings_built == [1]  # the demo tools' contracts are measured, with the real counter


def test_exec_leaves_no_empty_state_directory_in_the_project(run_cli: CliRunner, workspace: Path) -> None:
    done = run_cli("exec", "--tools", "demo", "--workspace", str(workspace), "--json", stdin="return 1\n")
    assert done.code == 0, done.out + done.err
    assert done.json()["value"] == 1
    assert sorted(p.name for p in workspace.iterdir()) == []
    kept = workspace / ".demo"
    kept.mkdir()
    again = run_cli("exec", "--tools", "demo", "--workspace", str(workspace), "--json", stdin="return 1\n")
    assert again.code == 0 and kept.is_dir()  # a directory the person had stays
