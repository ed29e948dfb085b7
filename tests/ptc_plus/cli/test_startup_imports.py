"""A process that starts no MCP server, serves nothing and chats with no model never imports their SDKs
(issue 32, ADR 0105).

Importing the MCP SDK (pydantic, httpx, starlette…) was most of every ``ptc-plus`` start's CPU time and of
every host's that loads the plugin. Each case runs in a fresh interpreter and reads its ``sys.modules`` at
the end: the plugin and the CLI imported, ``--help``, ``gate``, and ``capabilities plan`` without servers and
with a configured server planned from its ``tools/list`` snapshot (ADR 0097).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
import orjson
import pytest

from ptc_plus.adapters.mcp import SnapshotUnreadable, default_store
from ptc_plus.cli import COMMANDS, build_cli
from ptc_plus.cli.click_words import localized_click
from ptc_plus.cli.lazy_group import root

FIXTURE = Path(__file__).parents[1] / "adapters" / "mcp_fixture_server.py"
DEFERRED = ("mcp", "mcp_types", "pydantic", "openai", "prompt_toolkit", "numpy")
"""The SDKs (and the MCP SDK's pydantic) only a server start, ``mcp-serve`` or ``chat`` needs; numpy, which
only the semantic layer's encoder needs."""

_CHILD = """
import sys, orjson
argv = sys.argv[1:]
code = 0
if argv[0] == "import":
    __import__(argv[1])
else:
    from ptc_plus.cli import main
    code = main(argv)
deferred = {deferred!r}
sys.stdout.flush()
loaded = sorted(m for m in sys.modules if m in deferred or m.startswith(deferred + ("ptc_plus.", "hookspecs.")))
sys.stderr.write("\\nLOADED " + orjson.dumps(loaded).decode() + "\\n")
sys.exit(code)
"""


def _modules(*argv: str) -> list[str]:
    """The :data:`DEFERRED` and the project's modules a fresh interpreter has loaded after ``argv`` (``import
    <module>`` or a command)."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD.format(deferred=DEFERRED), *argv],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith("LOADED "), done.stderr
    loaded: list[str] = orjson.loads(line.removeprefix("LOADED "))
    return loaded


def _loaded(*argv: str) -> list[str]:
    """The :data:`DEFERRED` modules a fresh interpreter has loaded after ``argv``."""
    return [m for m in _modules(*argv) if m.split(".")[0] in DEFERRED]


@pytest.mark.parametrize("module", ["ptc_plus.plugin", "ptc_plus.cli"])
def test_importing_the_plugin_or_the_cli_imports_no_sdk(module: str) -> None:
    assert _loaded("import", module) == []


@pytest.mark.parametrize("argv", [("--help",), ("gate", "--user", "u")], ids=["help", "gate"])
def test_help_and_gate_import_no_sdk(argv: tuple[str, ...]) -> None:
    assert _loaded(*argv) == []


def test_version_and_help_import_no_command() -> None:
    """``--version`` answers from the package's literal version alone; ``--help`` lists the commands from their
    help messages without importing one (issue 32, ADR 0115)."""
    assert _modules("--version") == ["ptc_plus.cli"]
    helped = _modules("--help")
    assert "ptc_plus.cli.fast_help" in helped  # what the listing is made of (ADR 0123), not of the commands
    assert not [m for m in helped if m.split(".")[:3] in (["ptc_plus", "cli", c] for c in COMMANDS)]
    assert not [m for m in helped if m.startswith(("hookspecs.reference", "hookspecs.services", "ptc_plus.session"))]


def test_a_command_imports_its_own_module_only() -> None:
    commands = {m.split(".")[2] for m in _modules("gate", "--user", "u") if m.startswith("ptc_plus.cli.")}
    assert commands & set(COMMANDS) == {"gate"}


def test_importing_the_plugin_imports_no_session_machinery() -> None:
    """Registering the hooks needs the marker alone: the controller (runtime, catalog, config) comes at first use."""
    loaded = _modules("import", "ptc_plus.plugin")
    assert not [m for m in loaded if m.startswith(("ptc_plus.session", "ptc_plus.runtime", "ptc_plus.config"))]
    assert not [m for m in loaded if m.startswith(("hookspecs.services", "hookspecs.reference"))]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_lazy_help_lists_what_the_built_commands_say(lang: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The root help lists each command from a stand-in: the same lines as with every command built."""
    monkeypatch.setenv("PTC_LOCALE", lang)
    with localized_click():
        lazy = root().get_help(click.Context(root(), info_name="ptc-plus"))
        built = build_cli().get_help(click.Context(build_cli(), info_name="ptc-plus"))
    assert lazy == built
    assert all(f"  {name.replace('_', '-')} " in lazy for name in COMMANDS)


def test_a_plan_without_servers_imports_no_sdk(workspace: Path) -> None:
    assert _loaded("capabilities", "plan", "--workspace", str(workspace)) == []


def test_a_plan_from_a_servers_snapshot_imports_no_sdk(workspace: Path, tmp_path: Path) -> None:
    user = tmp_path / "xdg" / "ptc-plus" / "config.toml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(
        f'[mcp.servers.fixture]\ncommand = "{sys.executable}"\nargs = ["{FIXTURE}", "{tmp_path}"]\ntimeout_s = 60\n',
        "utf-8",
    )
    plan = ("capabilities", "plan", "--workspace", str(workspace))
    assert "mcp" in _loaded(*plan)  # no snapshot yet: the server is started to list its tools
    assert len(list(default_store().directory.glob("*.json"))) == 1
    assert _loaded(*plan) == []  # planned from the snapshot: no server, no SDK
    assert _loaded(*plan, "--verbose") == []


@pytest.mark.parametrize(
    "damage",
    [{"name": 7}, {"inputSchema": ["not", "an", "object"]}, {"outputSchema": "x"}, {"description": 1}],
    ids=["name", "input-schema", "output-schema", "description"],
)
def test_a_snapshot_tool_that_is_no_mcp_tool_is_still_unreadable(
    workspace: Path, tmp_path: Path, damage: dict[str, object]
) -> None:
    """Read without the SDK, a snapshot's tools are still checked: a damaged one is PTC-7023, not a plan."""
    store = default_store()
    store.directory.mkdir(parents=True)
    tool = {"name": "add", "inputSchema": {"type": "object"}, **damage}
    document = {"version": 1, "digest": "d", "server": "s", "taken_at": 0.0, "tools": [tool]}
    store.path("d").write_bytes(orjson.dumps(document))
    with pytest.raises(SnapshotUnreadable) as raised:
        store.load("d", "s")
    assert raised.value.code == "PTC-7023"
    store.path("d").write_bytes(orjson.dumps({**document, "tools": [{"name": "add", "inputSchema": {}}]}))
    loaded = store.load("d", "s")
    assert loaded is not None and [t.name for t in loaded.planned_tools()] == ["add"]
