"""The embedded-host door: every front door builds its reference host through :func:`embedded` (ADR 0121).

The scans read the source with :mod:`ast`, as ``tests/test_layers.py`` does: a new
front door that builds a host by hand, or writes a step's context messages itself
instead of stepping the session, fails here with its file and line.
"""

from __future__ import annotations

import ast
import tempfile
from pathlib import Path

import pytest

from ptc_plus.doors import Scratch, embedded

ROOT = Path(__file__).resolve().parents[3]
DOOR = Path("ptc_plus/doors/embedded.py")


def _calls(name: str, *, on: str | None = None) -> list[str]:
    """``file:line`` of every call in the plugin's source of ``name`` (``on``: only as an attribute of ``….on``)."""
    found = []
    for path in sorted((ROOT / "ptc_plus").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            callee = node.func
            if isinstance(callee, ast.Name):
                called, owner = callee.id, None
            elif isinstance(callee, ast.Attribute):
                called, owner = callee.attr, getattr(callee.value, "attr", getattr(callee.value, "id", None))
            else:
                continue
            if called == name and (on is None or owner == on):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_only_the_door_builds_a_reference_host() -> None:
    built = _calls("ReferenceHost")
    assert len(built) == 1 and built[0].startswith(f"{DOOR}:"), built


def test_no_front_door_runs_a_step_s_context_message_seam_itself() -> None:
    # The host's seam (view rebuilt, the plugins' messages committed to the log) is the session's offer_step.
    assert _calls("context_messages", on="facade") == []


def test_no_front_door_writes_context_message_events_itself() -> None:
    written = []
    for path in sorted((ROOT / "ptc_plus").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", None) == "append"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and node.args[0].value == "context-message"
            ):
                written.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert written == []


@pytest.mark.asyncio
async def test_a_scratch_state_holds_the_sessions_and_goes_with_the_door(workspace: Path) -> None:
    async with embedded(workspace, state=Scratch("ptc-exec-"), entry_points=False, user="someone") as host:
        state = host.state_dir
        session = await host.start_session()
        log = host.log_path(session.agent.session_id)
        assert state.name.startswith("ptc-exec-") and state.parent == Path(tempfile.gettempdir()).resolve()
        assert log.is_relative_to(state) and log.exists()
        assert session.info.user_id == "someone"
    assert host.closed and not state.exists()


@pytest.mark.asyncio
async def test_without_a_state_the_sessions_live_in_the_workspace(workspace: Path) -> None:
    async with embedded(workspace, entry_points=False) as host:
        session = await host.start_session()
        assert host.log_path(session.agent.session_id).is_relative_to(workspace / ".agent-host")
        assert session.info.user_id == ""
    assert host.log_path(session.agent.session_id).exists()  # kept: such a session can be resumed


@pytest.mark.asyncio
async def test_the_installed_plugins_load_unless_the_door_says_not(workspace: Path) -> None:
    async with embedded(workspace) as host:
        assert "ptc_plus" in dict(host.facade.pm.list_name_plugin())
    async with embedded(workspace, entry_points=False, max_steps=3) as host:
        assert "ptc_plus" not in dict(host.facade.pm.list_name_plugin())
        assert host.max_steps == 3
