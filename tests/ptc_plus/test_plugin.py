"""The plugin keeps its state in the host's plugin state (contract 1.4, ADR 0089), never in a module map."""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

import ptc_plus.plugin
from hookspecs import AgentRef, HostServices, SessionInfo
from hookspecs.reference import ReferenceHost
from ptc_plus.errors import PtcError
from ptc_plus.session import PtcController
from tests.scaffolding import isolate_from_the_machine


@pytest.fixture(autouse=True)
def machine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_from_the_machine(monkeypatch, tmp_path)


def test_the_plugin_module_keeps_no_map() -> None:
    maps = [
        name
        for name, value in vars(ptc_plus.plugin).items()
        if not name.startswith("__")
        and isinstance(value, Mapping | weakref.WeakKeyDictionary | weakref.WeakValueDictionary)
    ]
    assert maps == []


@pytest.mark.asyncio
async def test_each_host_keeps_its_own_controller_until_shutdown(
    make_reference_host: Callable[..., ReferenceHost], tmp_path: Path
) -> None:
    one = make_reference_host(plugins=[ptc_plus.plugin])
    other = make_reference_host(plugins=[ptc_plus.plugin], state_dir=tmp_path / "other")
    first = await one.start_session()
    await other.start_session()
    mine = one.services.plugin_state[ptc_plus.plugin.STATE_KEY]
    assert isinstance(mine, PtcController) and ptc_plus.plugin.controller(one.services) is mine
    assert other.services.plugin_state[ptc_plus.plugin.STATE_KEY] is not mine
    assert mine.session(first.agent) is not None  # the hooks found and filled this host's controller
    await one.aclose()
    assert ptc_plus.plugin.STATE_KEY not in one.services.plugin_state  # closed with its host
    assert isinstance(other.services.plugin_state[ptc_plus.plugin.STATE_KEY], PtcController)
    await other.aclose()


class OldServices:
    """A contract-1.3 host's services: no ``plugin_state``."""

    workspace = Path("/nonexistent")
    user_id = ""
    protected_paths = ()
    token_counter = None
    spill_store = None


def test_a_host_without_plugin_state_leaves_the_plugin_inactive(caplog: pytest.LogCaptureFixture) -> None:
    services: HostServices = OldServices()  # type: ignore[assignment]
    agent = AgentRef(session_id="s", agent_id="s", family_id="s")
    info = SessionInfo(agent=agent, workspace=Path("/nonexistent"), user_id="", title="", model_route="")
    with caplog.at_level(logging.WARNING, logger="ptc_plus.plugin"):
        ptc_plus.plugin.agent_host_session_start(info, services)
    assert any("PTC-1003" in r.getMessage() or "plugin_state" in r.getMessage() for r in caplog.records)
    assert ptc_plus.plugin.agent_host_tools(agent, services) == []
    assert ptc_plus.plugin.agent_host_shutdown(services) is None
    with pytest.raises(PtcError) as raised:
        ptc_plus.plugin.controller(services)
    assert raised.value.code == "PTC-1003" and "OldServices" in raised.value.message("en")
