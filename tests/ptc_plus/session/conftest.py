"""Fixtures for session tests: an isolated environment, a demo workspace with a config, real reference hosts.

Hosts load exactly ``ptc_plus.plugin`` (no entry points) and the demo tools.
Programs run under the default ``workspace-write`` policy, which needs
bubblewrap, unless a test asks for :func:`unconfined`: a *user-level* config
choosing ``danger-full-access`` (a workspace file may not loosen the
sandbox), so checks that do not depend on confinement run everywhere.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import pytest_asyncio

import ptc_plus.plugin
from hookspecs.reference import AssistantTurn, ReferenceHost, RequestedCall, ScriptedModel, Session
from hookspecs.reference.demo_tools import demo_tool_definitions
from ptc_plus.plan import CapabilityPlan, PlanEntry
from tests.scaffolding import isolate_from_the_machine

if TYPE_CHECKING:
    from ptc_plus.session.controller import SessionState
    from ptc_plus.session.environment import Environment

HostFactory = Callable[..., Awaitable[ReferenceHost]]


def state_of(host: ReferenceHost, session: Session) -> SessionState:
    """What the plugin holds for ``session`` on ``host`` (the test fails if it holds nothing).

    The one place session tests reach the plugin's per-session state, so they
    need neither the controller's internals nor ``type: ignore``.
    """
    state = ptc_plus.plugin.controller(host.services).session(session.agent)
    assert state is not None, f"the plugin holds no state for session {session.agent.session_id}"
    return state


def environment_of(host: ReferenceHost, session: Session) -> Environment:
    """The frozen environment of this session (the test fails if there is none: host provision)."""
    environment = state_of(host, session).environment
    assert environment is not None, f"session {session.agent.session_id} has no environment (host provision)"
    return environment


def plan_of(host: ReferenceHost, session: Session) -> CapabilityPlan:
    """The plan of this session (the test fails if the session has no environment: host provision)."""
    return environment_of(host, session).plan


def entry_of(plan: CapabilityPlan, identity: str) -> PlanEntry:
    """The plan's entry for ``identity`` (the test fails if the plan has none)."""
    entry = plan.entry(identity)
    assert entry is not None, f"the plan has no entry for {identity}"
    return entry


MANAGED = """\
version = 1

[management]
enabled = true
budget_tokens = {budget}
baseline = {baseline}
"""

EVIDENCE_BUDGET = 500
"""Room for the few demo contracts a test backs, never for the whole demo catalog (771 offline tokens): under it
evidence decides; a catalog that fits whole is all ``full`` with reason ``fits-budget`` (ADR 0080)."""


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No PTC_* variable and no user config file leak in from the machine."""
    isolate_from_the_machine(monkeypatch, tmp_path)


def write_user_config(tmp_path: Path, text: str) -> Path:
    """Write the user-level ``config.toml`` under the isolated ``XDG_CONFIG_HOME``."""
    path = tmp_path / "xdg" / "ptc-plus" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


UNCONFINED = 'version = 1\n\n[runtime]\npolicy = "danger-full-access"\n'


@pytest.fixture
def unconfined(tmp_path: Path) -> Path:
    """Programs run without confinement (user-level policy override): no bubblewrap needed."""
    return write_user_config(tmp_path, UNCONFINED)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "routes.md").write_text("# Routes\n\nTODO: hill repeats.\n", encoding="utf-8")
    return root


def write_config(
    workspace: Path,
    *,
    budget: int = EVIDENCE_BUDGET,
    baseline: Sequence[str] = (),
    choices: dict[str, str] | None = None,
    enabled: bool = True,
    extra: str = "",
) -> Path:
    """Write ``<workspace>/.ptc-plus/config.toml`` with management on (unless ``enabled`` is false)."""
    text = MANAGED.format(budget=budget, baseline="[" + ", ".join(f'"{b}"' for b in baseline) + "]")
    if not enabled:
        text = text.replace("enabled = true", "enabled = false")
    for identity, value in (choices or {}).items():
        text += f'\n[capabilities."{identity}"]\ndisclosure = "{value}"\n'
    path = workspace / ".ptc-plus" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + extra, encoding="utf-8")
    return path


def write_skill(root: Path, name: str, description: str) -> None:
    """An Agent-Skills folder ``root/name`` whose ``SKILL.md`` has ``description`` and a one-line body."""
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\nBody of {name}.\n", "utf-8")


def program_turns(code: str, final: str = "done") -> ScriptedModel:
    """A model that runs ``code`` with ``run_code`` once, then answers ``final``."""
    call = RequestedCall(tool="run_code", arguments={"description": "test", "code": code})
    return ScriptedModel([AssistantTurn(tool_calls=(call,)), AssistantTurn(text=final)])


@pytest_asyncio.fixture
async def open_host(workspace: Path, tmp_path: Path) -> AsyncIterator[HostFactory]:
    """``await open_host(plugins=..., tools=...)``: a reference host over ``workspace``, closed at teardown."""
    hosts: list[ReferenceHost] = []

    async def factory(**kwargs: Any) -> ReferenceHost:
        kwargs.setdefault("workspace", workspace)
        kwargs.setdefault("state_dir", tmp_path / "state")
        kwargs.setdefault("tools", demo_tool_definitions(workspace))
        kwargs.setdefault("plugins", [ptc_plus.plugin])
        kwargs.setdefault("load_entry_points", False)
        kwargs.setdefault("user_id", "u1")
        host = ReferenceHost(**kwargs)
        hosts.append(host)
        return host

    yield factory
    for host in hosts:
        await host.aclose()
