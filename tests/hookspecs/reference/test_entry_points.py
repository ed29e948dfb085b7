"""Entry-point discovery for real: the installable test plugin under tests/plugins/.

The test environment installs it (``scripts/test`` does); its absence is a
failure, not a skip, because then discovery would go untested.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

import pytest

from hookspecs.markers import ENTRY_POINT_GROUP
from hookspecs.reference import BLOCKLIST_ENV, ReferenceHost, ScriptedModel


def test_the_test_plugin_is_installed() -> None:
    names = {ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)}
    assert "testplugin" in names, "pip install ./tests/plugins/agent_host_testplugin into the test environment"


async def _sections_and_receipt(workspace: Path) -> tuple[list[str], str]:
    async with ReferenceHost(workspace=workspace) as host:
        session = await host.start_session(model=ScriptedModel([]))
        return [s.name for s in session.prompt_sections()], session.command("/testplugin").status.value


@pytest.mark.asyncio
async def test_host_discovers_the_plugin_from_its_entry_point(
    reference_workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(BLOCKLIST_ENV, raising=False)
    sections, status = await _sections_and_receipt(reference_workspace)
    assert "testplugin" in sections
    assert status == "shown"


@pytest.mark.asyncio
async def test_blocklist_keeps_the_plugin_out(reference_workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BLOCKLIST_ENV, " other , testplugin ")
    sections, status = await _sections_and_receipt(reference_workspace)
    assert "testplugin" not in sections
    assert status == "failed"


@pytest.mark.asyncio
async def test_builtins_load_before_entry_points_and_extras_after(reference_workspace: Path) -> None:
    class Extra:
        pass

    async with ReferenceHost(workspace=reference_workspace, plugins=[Extra()]) as host:
        names = [name for name, _ in host.facade.pm.list_name_plugin()]
    assert names[0] == "agent-host-builtins"
    extra = next(n for n in names if n.startswith("Extra-"))
    assert names.index("testplugin") < names.index(extra)
