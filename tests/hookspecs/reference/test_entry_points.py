"""Entry-point discovery for real: the test plugin under tests/plugins/.

The plugin is installed nowhere (ADR 0061): ``plugin_on_path`` puts its
directory, the module and its ``.dist-info``, on ``sys.path``, so
``importlib.metadata`` finds a real ``agent_host`` entry point for as long as
a test needs it, and the user's ``.venv`` never loads it into a demo.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

import pytest

from hookspecs.markers import ENTRY_POINT_GROUP
from hookspecs.reference import BLOCKLIST_ENV, ReferenceHost, ScriptedModel

PLUGIN_SITE = Path(__file__).resolve().parents[2] / "plugins" / "agent_host_testplugin"


@pytest.fixture
def plugin_on_path(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test plugin's directory on ``sys.path`` for this test only (undone afterwards)."""
    monkeypatch.syspath_prepend(str(PLUGIN_SITE))
    return PLUGIN_SITE


def _test_plugin_entry_points() -> list[str]:
    return [
        f"{ep.dist.name if ep.dist else '?'}: {ep.value}"
        for ep in entry_points(group=ENTRY_POINT_GROUP, name="testplugin")
    ]


def test_the_test_plugin_is_installed_nowhere() -> None:
    # scripts/test used to pip-install it into .venv, where `ptc-plus demo` then loaded it into the system prompt.
    assert _test_plugin_entry_points() == [], "pip uninstall agent-host-testplugin (scripts/test does)"


def test_the_test_plugin_is_found_through_its_distribution(plugin_on_path: Path) -> None:
    assert _test_plugin_entry_points() == ["agent-host-testplugin: agent_host_testplugin"]


async def _sections_and_receipt(workspace: Path) -> tuple[list[str], str]:
    async with ReferenceHost(workspace=workspace) as host:
        session = await host.start_session(model=ScriptedModel([]))
        return [s.name for s in session.prompt_sections()], session.command("/testplugin").status.value


@pytest.mark.asyncio
@pytest.mark.usefixtures("plugin_on_path")
async def test_host_discovers_the_plugin_from_its_entry_point(
    reference_workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(BLOCKLIST_ENV, raising=False)
    sections, status = await _sections_and_receipt(reference_workspace)
    assert "testplugin" in sections
    assert status == "shown"


@pytest.mark.asyncio
@pytest.mark.usefixtures("plugin_on_path")
async def test_blocklist_keeps_the_plugin_out(reference_workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BLOCKLIST_ENV, " other , testplugin ")
    sections, status = await _sections_and_receipt(reference_workspace)
    assert "testplugin" not in sections
    assert status == "failed"


@pytest.mark.asyncio
@pytest.mark.usefixtures("plugin_on_path")
async def test_builtins_load_before_entry_points_and_extras_after(reference_workspace: Path) -> None:
    class Extra:
        pass

    async with ReferenceHost(workspace=reference_workspace, plugins=[Extra()]) as host:
        names = [name for name, _ in host.facade.pm.list_name_plugin()]
    assert names[0] == "agent-host-builtins"
    extra = next(n for n in names if n.startswith("Extra-"))
    assert names.index("testplugin") < names.index(extra)
