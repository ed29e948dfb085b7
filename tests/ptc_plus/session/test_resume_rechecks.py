"""Resume re-checks what can change under a session: the gate and the sandbox are facts of today (ADR 0053).

The plan (and the configured presentation) stay frozen; a resumed session
whose gate is now closed, or whose sandbox is now missing, is presented
natively, says why, and its stale code-mode catalog is superseded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hookspecs.reference import AssistantTurn, ModelRequest, ScriptedModel
from ptc_plus.config import Presentation
from ptc_plus.session.projection import CATALOG_PROVENANCE

from .conftest import HostFactory, state_of, write_config


def answer(text: str = "ok") -> ScriptedModel:
    return ScriptedModel([AssistantTurn(text=text)])


def env_bytes(host: Any, session: Any) -> bytes:
    state = state_of(host, session)
    assert state is not None and state.environment is not None
    return state.environment.to_bytes()


async def code_mode_session(open_host: HostFactory) -> tuple[str, bytes, list[str]]:
    """A session that ran one turn in code mode (catalog delivered), then its host closed; its id,
    environment bytes and the host's own tool names."""
    host = await open_host()
    session = await host.start_session(title="t", model=answer())
    state = state_of(host, session)
    assert state is not None and state.ptc
    await session.run_turn("hi")
    assert [e for e in session.surface.entries if e.provenance == CATALOG_PROVENANCE]
    original = env_bytes(host, session)
    own = [s.name for s in host.view(session.agent).specs() if s.name not in ("run_code", "read_spill")]
    await host.aclose()
    return session.agent.session_id, original, own


def catalog_surface(request: ModelRequest) -> list[str]:
    return [str(m["content"]) for m in request.messages if m["role"] == "system"]


def assert_native(request: ModelRequest, own: list[str]) -> None:
    assert [t.name for t in request.tools] == own  # every host tool native, no run_code
    assert "run_code" not in request.system  # no code-mode bootstrap
    (notice,) = catalog_surface(request)  # the stale catalog is superseded by one notice
    assert "async def" not in notice and "tools." not in notice
    assert "code mode is off" in notice.lower()


@pytest.mark.usefixtures("unconfined")
@pytest.mark.parametrize(
    ("variable", "value", "reason", "words"),
    [
        ("PTC_MODE", "off", "mode-off", ("PTC_MODE is off", "PTC_MODE 为 off")),
        ("PTC_ROLLOUT_PERCENT", "0", "rollout-zero", ("PTC_ROLLOUT_PERCENT is 0", "PTC_ROLLOUT_PERCENT 为 0")),
    ],
)
@pytest.mark.asyncio
async def test_the_kill_switch_stops_code_mode_in_a_resumed_session(
    open_host: HostFactory,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
    value: str,
    reason: str,
    words: tuple[str, str],
) -> None:
    write_config(workspace)
    session_id, original, own = await code_mode_session(open_host)

    monkeypatch.setenv(variable, value)
    host = await open_host()
    model = answer()
    resumed = await host.resume_session(session_id, model=model)
    state = state_of(host, resumed)
    assert state is not None and not state.ptc and state.presentation is Presentation.NATIVE
    assert "run_code" not in host.view(resumed.agent).names()
    assert env_bytes(host, resumed) == original  # the plan stays frozen
    await resumed.run_turn("again")
    assert_native(model.requests[0], own)
    text = resumed.command("/capabilities").text
    assert "native" in text.splitlines()[0] and "gate" in text and words[0] in text, text
    assert reason not in text  # the gate's words, never its raw token (issue 26)
    assert "superseded" in text
    monkeypatch.setenv("PTC_LOCALE", "zh")
    text = resumed.command("/capabilities").text
    assert words[1] in text.splitlines()[0] and reason not in text, text


@pytest.mark.usefixtures("unconfined")
@pytest.mark.asyncio
async def test_code_mode_returns_when_the_gate_opens_again(
    open_host: HostFactory, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(workspace)
    session_id, original, _ = await code_mode_session(open_host)
    monkeypatch.setenv("PTC_MODE", "off")
    host = await open_host()
    await (await host.resume_session(session_id, model=answer())).run_turn("off now")
    await host.aclose()

    monkeypatch.delenv("PTC_MODE")
    again = await open_host()
    model = answer()
    resumed = await again.resume_session(session_id, model=model)
    assert "run_code" in again.view(resumed.agent).names()
    await resumed.run_turn("on again")
    (catalog,) = catalog_surface(model.requests[0])  # the catalog supersedes the notice
    assert catalog.startswith("# Capability catalog")
    sent = [e.data["text"].splitlines()[0] for e in resumed.log.events if e.type == "context-message"]
    assert [line.startswith("# Capability catalog") for line in sent] == [True, False, True]
    assert [t.name for t in model.requests[0].tools] == ["run_code", "read_spill"]
    assert env_bytes(again, resumed) == original


@pytest.mark.usefixtures("unconfined")
@pytest.mark.asyncio
async def test_the_configured_presentation_is_frozen_with_the_plan(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace)
    session_id, _, _ = await code_mode_session(open_host)
    write_config(workspace, extra='\n[runtime]\npresentation = "native"\n')  # a config change is not a fact of today
    host = await open_host()
    resumed = await host.resume_session(session_id)
    state = state_of(host, resumed)
    assert state is not None and state.ptc and state.presentation is Presentation.PTC


@pytest.mark.needs_bwrap
@pytest.mark.asyncio
async def test_a_session_resumed_without_bubblewrap_is_presented_natively(
    open_host: HostFactory, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(workspace)  # the default workspace-write policy: confinement needs bubblewrap
    session_id, original, own = await code_mode_session(open_host)

    empty = tmp_path / "no-bwrap-here"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # this machine has no bubblewrap now
    host = await open_host()
    model = answer()
    resumed = await host.resume_session(session_id, model=model)
    state = state_of(host, resumed)
    assert state is not None and not state.ptc and state.presentation is Presentation.NATIVE
    assert "run_code" not in host.view(resumed.agent).names()  # never a run_code that always fails
    assert env_bytes(host, resumed) == original
    await resumed.run_turn("again")
    assert_native(model.requests[0], own)
    first = resumed.command("/capabilities").text.splitlines()[0]
    assert "native" in first and "sandbox" in first and "bwrap" in first  # the probe's detail
