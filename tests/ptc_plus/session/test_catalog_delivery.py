"""The catalog counts as delivered only once the host committed it; a session sent native gets a notice.

A context message is committed by the host after *every* plugin answered
``agent_host_context_messages``; when a later plugin raises, the step
aborts and nothing is committed (hookspecs/specs.py). A corrupt plan
record sends a resumed session native: the code-mode catalog its surface
still carries is superseded by a notice, and ``/capabilities`` says so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import ptc_plus.plugin
from hookspecs import SessionRecord, StepInfo, hookimpl
from hookspecs.reference import AssistantTurn, ModelRequest, RequestedCall, ScriptedModel
from hookspecs.reference.errors import HostError
from ptc_plus.session import view as view_module
from ptc_plus.session.delivery import DELIVERED_KIND
from ptc_plus.session.environment import KIND
from ptc_plus.session.projection import CATALOG_PROVENANCE, catalog_message

from .conftest import HostFactory, write_config


class AbortsFirstStep:
    """Another plugin whose context-message hook fails once, after PTC Plus answered (pluggy calls the
    later-registered plugin first, so this one is registered before ``ptc_plus.plugin``)."""

    def __init__(self) -> None:
        self.aborted: list[StepInfo] = []

    @hookimpl
    def agent_host_context_messages(self, step: StepInfo, services: Any) -> list[Any]:
        if not self.aborted:
            self.aborted.append(step)
            raise RuntimeError("another plugin failed this step")
        return []


def answer(text: str = "ok") -> ScriptedModel:
    return ScriptedModel([AssistantTurn(text=text)])


def system_messages(request: ModelRequest) -> list[str]:
    return [str(m["content"]) for m in request.messages if m["role"] == "system"]


def committed(session: Any) -> list[str]:
    return [e.data["text"] for e in session.log.events if e.type == "context-message"]


@pytest.mark.asyncio
async def test_an_aborted_step_does_not_count_as_delivery(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace)
    other = AbortsFirstStep()
    host = await open_host(plugins=[other, ptc_plus.plugin])
    model = answer()
    session = await host.start_session(title="t", model=model)
    with pytest.raises(RuntimeError):
        await session.run_turn("hi")
    assert other.aborted and committed(session) == [] and model.requests == []
    await session.run_turn("hi")  # the retried step carries the catalog
    (catalog,) = system_messages(model.requests[0])
    assert catalog.startswith("# Capability catalog")
    assert len(committed(session)) == 1


@pytest.mark.asyncio
async def test_the_catalog_text_is_built_once_per_environment(
    open_host: HostFactory, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An offer made again (the first step aborted) is the frozen view's message, not a new composition; a refresh
    that applies builds its environment's once, in its validation, and holds that one (ADR 0112)."""
    built: list[str] = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        found = catalog_message(*args, **kwargs)
        built.append(found.text)
        return found

    monkeypatch.setattr(view_module, "catalog_message", counted)
    write_config(workspace)
    host = await open_host(plugins=[AbortsFirstStep(), ptc_plus.plugin])
    model = ScriptedModel([AssistantTurn(text="one"), AssistantTurn(text="two")])
    session = await host.start_session(title="t", model=model)
    with pytest.raises(RuntimeError):
        await session.run_turn("hi")
    await session.run_turn("hi")
    assert system_messages(model.requests[0]) == built  # offered twice, composed once
    write_config(workspace, choices={"host:convert_units": "full"})
    assert session.command("/capabilities refresh").status == "applied"
    await session.run_turn("again")
    assert len(built) == 2 and built[1] in system_messages(model.requests[1])[-1]


@pytest.mark.asyncio
async def test_an_aborted_step_then_resume_still_delivers_the_catalog(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace)
    host = await open_host(plugins=[AbortsFirstStep(), ptc_plus.plugin])
    session = await host.start_session(title="t", model=answer())
    with pytest.raises(RuntimeError):
        await session.run_turn("hi")
    await host.aclose()

    again = await open_host()
    model = answer()
    resumed = await again.resume_session(session.agent.session_id, model=model)
    await resumed.run_turn("hi")
    (catalog,) = system_messages(model.requests[0])  # the session never saw its catalog: it gets it now
    assert catalog.startswith("# Capability catalog")


@pytest.mark.asyncio
async def test_a_delivered_catalog_is_not_repeated(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace)
    host = await open_host()
    session = await host.start_session(
        title="t", model=ScriptedModel([AssistantTurn(text="1"), AssistantTurn(text="2")])
    )
    await session.run_turn("one")
    await session.run_turn("two")
    await host.aclose()
    again = await open_host()
    resumed = await again.resume_session(session.agent.session_id, model=answer())
    await resumed.run_turn("three")
    assert len(committed(resumed)) == 1  # delivered once, confirmed, never re-sent


@pytest.mark.asyncio
async def test_a_corrupt_record_supersedes_the_code_mode_catalog_with_a_notice(
    open_host: HostFactory, workspace: Path
) -> None:
    write_config(workspace)
    host = await open_host()
    session = await host.start_session(title="t", model=answer())
    await session.run_turn("hi")
    (catalog,) = committed(session)
    assert "run_code" in catalog
    host.services.append_record(session.agent, SessionRecord(kind=KIND, payload={"version": 1, "plan": [1, 2]}))
    await host.aclose()

    again = await open_host()
    model = ScriptedModel([AssistantTurn(text="native now"), AssistantTurn(text="still")])
    resumed = await again.resume_session(session.agent.session_id, model=model)
    before = resumed.command("/capabilities").text
    assert "corrupt" in before and "nothing injected" not in before
    assert "will be superseded" in before  # the notice goes with the next model step
    await resumed.run_turn("next")
    (notice,) = system_messages(model.requests[0])  # the catalog is gone from the surface, the notice replaces it
    assert "run_code" not in notice and "async def" not in notice and "code mode is off" in notice.lower()
    assert [e.provenance for e in resumed.surface.entries if e.provenance] == [CATALOG_PROVENANCE]
    assert "run_code" not in [t.name for t in model.requests[0].tools]
    after = resumed.command("/capabilities").text
    assert "corrupt" in after and "superseded by a notice" in after
    await resumed.run_turn("more")
    assert len(committed(resumed)) == 2  # the notice is sent once
    await again.aclose()

    third = await open_host()
    resumed_again = await third.resume_session(session.agent.session_id, model=answer())
    await resumed_again.run_turn("and again")
    assert len(committed(resumed_again)) == 2  # and not again after another resume


@pytest.mark.usefixtures("unconfined")
@pytest.mark.asyncio
async def test_a_later_step_of_the_turn_proves_the_catalog_was_committed(
    open_host: HostFactory, workspace: Path
) -> None:
    write_config(workspace)
    host = await open_host()
    call = RequestedCall(tool="run_code", arguments={"description": "t", "code": "return 1"})
    model = ScriptedModel([AssistantTurn(tool_calls=(call,)), AssistantTurn(text="done")])
    session = await host.start_session(title="t", model=model)
    await session.run_turn("go")
    assert len(model.requests) == 2 and len(committed(session)) == 1  # step 2 re-sent nothing
    kinds = [r.kind for r in host.services.read_records(session.agent)]
    assert kinds.count(DELIVERED_KIND) == 1


@pytest.mark.asyncio
async def test_an_unproven_offer_is_made_again_and_supersedes_itself(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace)
    host = await open_host()
    model = ScriptedModel([])  # the model route fails after the step was committed: nothing proves it
    session = await host.start_session(title="t", model=model)
    with pytest.raises(HostError):
        await session.run_turn("hi")
    assert len(committed(session)) == 1
    session.model = answer()
    await session.run_turn("hi again")
    assert len(committed(session)) == 2  # offered again, since nothing proved the first commit...
    catalogs = [e for e in session.surface.entries if e.provenance == CATALOG_PROVENANCE]
    assert len(catalogs) == 1  # ...and the model sees it once: the later message supersedes the earlier


@pytest.mark.asyncio
async def test_an_unproven_catalog_is_superseded_when_the_session_resumes_native(
    open_host: HostFactory, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(workspace)
    host = await open_host()
    session = await host.start_session(title="t", model=ScriptedModel([]))  # committed, then the model fails
    with pytest.raises(HostError):
        await session.run_turn("hi")
    (catalog,) = committed(session)
    assert "run_code" in catalog
    await host.aclose()

    monkeypatch.setenv("PTC_MODE", "off")
    again = await open_host()
    model = answer("native now")
    resumed = await again.resume_session(session.agent.session_id, model=model)
    assert "will be superseded" in resumed.command("/capabilities").text
    await resumed.run_turn("next")
    (notice,) = system_messages(model.requests[0])  # not the stale code-mode catalog
    assert "run_code" not in notice and "code mode is off" in notice.lower()
