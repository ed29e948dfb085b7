"""Observation by session family, through the real reference host (issue 11's counter-examples).

Every test drives sessions on a :class:`ReferenceHost` with the plugin
loaded and scripted models, and reads what landed in the statistics stores
(:class:`~ptc_plus.statistics.StoreView`). Only the two tests at the end call
the observer and :func:`~ptc_plus.statistics.record_settled` directly: the
crediting rule with agents in several workspaces, and a store failing in one scope.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

import ptc_plus.plugin
from hookspecs import (
    AgentRef,
    FamilySettlement,
    HostServices,
    JSONObject,
    JSONValue,
    Refusal,
    ToolCall,
    ToolContext,
    ToolFailure,
    ToolSpec,
    hookimpl,
    tool,
)
from hookspecs.reference import AssistantTurn, ReferenceHost, RequestedCall, ScriptedModel, Session
from hookspecs.reference.model import ModelRequest
from ptc_plus.statistics import (
    AgentOffers,
    CapabilityStats,
    Evidence,
    FamilyObserver,
    FamilySample,
    Offer,
    Settled,
    StatisticsStore,
    StatisticsStoreCorrupt,
    StoreView,
    real_workspace,
    record_settled,
    user_store,
    workspace_store,
)
from tests.scaffolding import isolate_from_the_machine

SECRET = "s3cr3t-7f1c9a2e"
"""Planted in user text, arguments and results; it must never reach a store."""

ECHO = "host:echo"
FAIL = "host:fail"
SPARE = "host:spare"


@tool(
    "echo",
    description="Echo the text back.",
    input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
)
async def _echo(arguments: JSONObject, context: ToolContext) -> JSONValue:
    return {"echo": arguments["text"], "note": SECRET}


@tool("fail", description="Always fails.", input_schema={"type": "object"})
async def _fail(arguments: JSONObject, context: ToolContext) -> JSONValue:
    raise ToolFailure("broken", f"it broke {SECRET}")


@tool("spare", description="Never called by anyone.", input_schema={"type": "object"})
async def _spare(arguments: JSONObject, context: ToolContext) -> JSONValue:
    return None


TOOLS = [_echo, _fail, _spare]


class Settlements:
    """A second plugin that keeps every settlement the host announces (to replay one)."""

    def __init__(self) -> None:
        self.seen: list[FamilySettlement] = []

    @hookimpl
    def agent_host_family_settled(self, family: FamilySettlement, services: HostServices) -> None:
        self.seen.append(family)


HostFactory = Callable[..., Awaitable[ReferenceHost]]


@pytest.fixture(autouse=True)
def xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The machine's user config (and user store) never leak in; programs run unconfined (user-level)."""
    home = isolate_from_the_machine(monkeypatch, tmp_path)
    config = home / "ptc-plus" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('version = 1\n\n[runtime]\npolicy = "danger-full-access"\n', encoding="utf-8")
    return home


def write_config(
    workspace: Path,
    *,
    choices: dict[str, str] | None = None,
    statistics: bool = True,
    management: bool = True,
    share_with_user: bool = True,
) -> None:
    """Management on, nothing in the baseline (so managed tools are ``on-demand``), explicit ``choices``.

    The budget is ``0`` so that even a tiny catalog is not shown whole (``fits-budget``, ADR 0080).
    """
    text = f"version = 1\n\n[management]\nenabled = {str(management).lower()}\nbudget_tokens = 0\nbaseline = []\n"
    text += f"\n[statistics]\nenabled = {str(statistics).lower()}\nshare_with_user = {str(share_with_user).lower()}\n"
    for identity, value in (choices or {}).items():
        text += f'\n[capabilities."{identity}"]\ndisclosure = "{value}"\n'
    path = workspace / ".ptc-plus" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest_asyncio.fixture
async def open_host(workspace: Path, tmp_path: Path) -> AsyncIterator[HostFactory]:
    hosts: list[ReferenceHost] = []

    async def factory(**kwargs: Any) -> ReferenceHost:
        kwargs.setdefault("workspace", workspace)
        kwargs.setdefault("state_dir", tmp_path / "state")
        kwargs.setdefault("tools", TOOLS)
        kwargs.setdefault("plugins", [ptc_plus.plugin])
        kwargs.setdefault("load_entry_points", False)
        host = ReferenceHost(**kwargs)
        hosts.append(host)
        return host

    yield factory
    for host in hosts:
        await host.aclose()


def program(code: str) -> RequestedCall:
    return RequestedCall(tool="run_code", arguments={"description": "test", "code": code})


def runs(*codes: str) -> ScriptedModel:
    """A model that runs each program in turn (one step each), then answers."""
    return ScriptedModel([*(AssistantTurn(tool_calls=(program(c),)) for c in codes), AssistantTurn(text="done")])


def revision(host: ReferenceHost, session: Session, identity: str) -> str:
    state = ptc_plus.plugin.controller(host.services).session(session.agent)
    assert state is not None and state.environment is not None
    entry = state.environment.plan.entry(identity)
    assert entry is not None, identity
    return entry.revision


def stats(view: StoreView, host: ReferenceHost, session: Session, identity: str) -> CapabilityStats:
    return view.stats(identity, revision(host, session, identity), window=100, min_samples=1)


def settled_result(session: Session) -> Any:
    """The value the last settled outer call returned (a ``run_code`` result)."""
    settled = [e.data for e in session.log.events if e.type == "tool-settled" and e.data["top_level"]]
    return settled[-1]["result"]


# -- one use per family ----------------------------------------------------------------------------------


@pytest.mark.asyncio
@pytest.mark.parametrize("calls", [1_000, pytest.param(10_000, marks=pytest.mark.slow)])
async def test_many_calls_and_several_children_count_as_one_use(
    open_host: HostFactory, workspace: Path, xdg: Path, calls: int
) -> None:
    # The family unit's own example, a loop of 10,000 calls, runs under -m slow (ADR 0131): a real run pays a
    # round trip per call, a minute of one test worker. By default 1,000 calls take the same path; the observer
    # alone meets 10,000 dispatches of one tool in test_each_workspace_is_credited_with_what_was_available_there.
    write_config(workspace)
    # Many calls take minutes on a loaded machine: the run's deadline (120 s by default) is not the point.
    user_config = xdg / "ptc-plus" / "config.toml"
    user_config.write_text(user_config.read_text(encoding="utf-8") + "timeout_s = 600\n", encoding="utf-8")
    host = await open_host()
    loop = f"for i in range({calls}):\n    await tools.echo(text='x')\nreturn i"
    root = await host.start_session(model=runs(loop))
    await root.run_turn("go")
    assert settled_result(root)["value"]["value"] == calls - 1, settled_result(root)
    assert sum(1 for e in root.log.events if e.type == "tool-started" and e.data["tool"] == "echo") == calls
    for n in range(3):
        child = await root.fork(title=f"child {n}")
        child.model = runs("return await tools.echo(text='child')")
        await child.run_turn("go")
    view = workspace_store(workspace).read()
    assert view.status == "ok" and view.families() == 1
    assert stats(view, host, root, ECHO) == CapabilityStats(available=1, used=1, coverage=1.0, sufficient=True)
    latest = view.latest_revision(ECHO)
    assert latest is not None and latest[1].startswith("shape:")  # the call shape travels with the sample
    # One more family with one call weighs exactly as much.
    other = await host.start_session(model=runs("return await tools.echo(text='once')"))
    await other.run_turn("go")
    view = workspace_store(workspace).read()
    assert view.families() == 2
    assert (stats(view, host, root, ECHO).available, stats(view, host, root, ECHO).used) == (2, 2)
    # The user-global scope counts each family once too.
    user = user_store().read()
    assert user.families() == 2 and (stats(user, host, root, ECHO).used) == 2


# -- what is not use -------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_a_capability_off_or_absent_in_a_family_is_not_in_its_sample(
    open_host: HostFactory, workspace: Path
) -> None:
    write_config(workspace, choices={FAIL: "off"})
    host = await open_host()
    first = await host.start_session(model=runs("return await tools.echo(text='a')"))
    await first.run_turn("go")
    host.remove_tool("spare")  # absent from the second family's host
    second = await host.start_session(model=runs("return 1"))
    await second.run_turn("go")
    view = workspace_store(workspace).read()
    assert view.families() == 2
    assert view.stats(FAIL, revision(host, first, FAIL), window=100, min_samples=1).coverage is None  # no sample
    spare = view.stats(SPARE, revision(host, first, SPARE), window=100, min_samples=1)
    assert (spare.available, spare.used, spare.coverage) == (1, 0, 0.0)  # only the family that had it


@pytest.mark.asyncio
async def test_a_call_refused_by_validation_or_the_guard_is_not_use(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace)

    def refuse_spare(call: ToolCall, spec: ToolSpec) -> Refusal | None:
        return Refusal(code="no", reason="not today") if spec.name == "spare" else None

    host = await open_host(approver=refuse_spare)
    code = (
        "out = []\n"
        "for call in (lambda: tools.echo(text=5), lambda: tools.echo(), lambda: tools.spare()):\n"
        "    try:\n"
        "        await call()\n"
        "    except ToolCallError as e:\n"
        "        out.append(str(e))\n"
        "return out"
    )
    root = await host.start_session(model=runs(code))
    await root.run_turn("go")
    assert len(settled_result(root)["value"]["value"]) == 3, settled_result(root)
    refused = await root.call_tool("echo", {"text": 7})  # a direct call, refused by validation
    assert not refused.dispatched
    view = workspace_store(workspace).read()
    assert view.families() == 1
    for identity in (ECHO, SPARE):
        assert (stats(view, host, root, identity).available, stats(view, host, root, identity).used) == (1, 0)


@pytest.mark.asyncio
async def test_a_failed_call_is_use(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace)
    host = await open_host()
    root = await host.start_session(
        model=runs("try:\n    await tools.fail()\nexcept ToolCallError:\n    return 'failed'")
    )
    await root.run_turn("go")
    view = workspace_store(workspace).read()
    assert stats(view, host, root, FAIL).used == 1


@pytest.mark.asyncio
async def test_a_call_cancelled_by_its_run_timing_out_is_use(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace)

    @tool("slow", description="Takes its time.", input_schema={"type": "object"})
    async def slow(arguments: JSONObject, context: ToolContext) -> JSONValue:
        await context.cancelled.wait()
        return None

    host = await open_host(tools=[*TOOLS, slow])
    call = RequestedCall(
        tool="run_code", arguments={"description": "test", "code": "await tools.slow()", "timeout_s": 1}
    )
    root = await host.start_session(model=ScriptedModel([AssistantTurn(tool_calls=(call,)), AssistantTurn()]))
    await root.run_turn("go")
    nested = [e.data["result"] for e in root.log.events if e.type == "tool-settled" and not e.data["top_level"]]
    assert [(r["status"], r["dispatched"]) for r in nested] == [("cancelled", True)]
    view = workspace_store(workspace).read()
    assert stats(view, host, root, "host:slow").used == 1


@pytest.mark.asyncio
async def test_a_skill_counts_once_its_body_was_loaded(open_host: HostFactory, workspace: Path, tmp_path: Path) -> None:
    write_config(workspace)
    skills = tmp_path / "skills"
    for name in ("pdf", "maps"):
        (skills / name).mkdir(parents=True)
        (skills / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: About {name}.\n---\nBody.\n", encoding="utf-8"
        )
    host = await open_host(skills_dirs=[skills])
    code = (
        "await tools.load_skill(name='pdf')\n"
        "try:\n    await tools.load_skill(name='nope')\nexcept ToolCallError:\n    pass\n"
        "return await capabilities.search('maps')"
    )
    root = await host.start_session(model=runs(code))
    await root.run_turn("go")
    view = workspace_store(workspace).read()
    assert (stats(view, host, root, "skill:pdf").available, stats(view, host, root, "skill:pdf").used) == (1, 1)
    assert (stats(view, host, root, "skill:maps").available, stats(view, host, root, "skill:maps").used) == (1, 0)
    assert "skill:nope" not in view.capabilities()


@pytest.mark.asyncio
async def test_discovery_is_not_use(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace)
    host = await open_host()
    code = (
        "await capabilities.search('echo text')\n"
        "await capabilities.find('echo')\n"
        "await capabilities.inspect(['echo', 'spare'])\n"
        "return await capabilities.tree()"
    )
    root = await host.start_session(model=runs(code))
    await root.run_turn("go")
    assert settled_result(root)["status"] == "ok", settled_result(root)
    view = workspace_store(workspace).read()
    assert view.families() == 1
    for identity in (ECHO, SPARE):
        assert stats(view, host, root, identity).used == 0
    assert stats(view, host, root, ECHO).available == 1


@pytest.mark.asyncio
async def test_a_native_family_has_the_host_provision_available(
    open_host: HostFactory, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(workspace, choices={FAIL: "off"})
    monkeypatch.setenv("PTC_MODE", "off")
    host = await open_host()
    model = ScriptedModel(
        [AssistantTurn(tool_calls=(RequestedCall(tool="echo", arguments={"text": "hi"}),)), AssistantTurn(text="ok")]
    )
    root = await host.start_session(model=model)
    await root.run_turn("go")
    state = ptc_plus.plugin.controller(host.services).session(root.agent)
    assert state is not None and not state.ptc
    view = workspace_store(workspace).read()
    assert stats(view, host, root, ECHO).used == 1
    # Natively the host offers every tool, the plan's ``off`` ones too: they were available.
    assert (stats(view, host, root, FAIL).available, stats(view, host, root, FAIL).used) == (1, 0)


@pytest.mark.asyncio
async def test_a_child_working_in_another_workspace_credits_that_workspace(
    open_host: HostFactory, workspace: Path, tmp_path: Path
) -> None:
    write_config(workspace)
    other = tmp_path / "other"
    other.mkdir()
    write_config(other)
    alias = tmp_path / "alias"
    alias.symlink_to(other)
    host = await open_host()
    root = await host.start_session(model=runs("return 1"))
    child = await host.fork_session(root, title="elsewhere", workspace=alias)
    child.model = runs("return await tools.echo(text='there')")
    await root.run_turn("go")
    await child.run_turn("go")
    here, there = workspace_store(workspace).read(), workspace_store(other).read()
    assert here.families() == there.families() == 1
    assert (stats(here, host, root, ECHO).available, stats(here, host, root, ECHO).used) == (1, 0)
    assert (stats(there, host, child, ECHO).available, stats(there, host, child, ECHO).used) == (1, 1)
    assert not (alias / ".ptc-plus" / "statistics.json").is_symlink()
    user = user_store().read()
    assert user.families() == 1 and stats(user, host, root, ECHO).used == 1


# -- settlement ------------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_a_running_family_is_not_a_sample(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace)
    seen: list[int] = []

    @tool("probe", description="Looks at the store.", input_schema={"type": "object"})
    async def probe(arguments: JSONObject, context: ToolContext) -> JSONValue:
        seen.append(workspace_store(workspace).read().families())
        return None

    host = await open_host(tools=[*TOOLS, probe])
    root = await host.start_session(model=runs("await tools.echo(text='a')\nawait tools.probe()"))
    await root.run_turn("go")
    assert seen == [0]  # mid-turn, after a use: nothing recorded yet
    assert workspace_store(workspace).read().families() == 1

    # A child still in its turn keeps the family live: the root settling is no boundary.
    release = asyncio.Event()

    class Waiting(ScriptedModel):
        async def complete(self, request: ModelRequest) -> AssistantTurn:
            if not self.requests:
                await release.wait()
            return await super().complete(request)

    second = await host.start_session(model=runs("return 1"))
    child = await second.fork(title="slow")
    child.model = Waiting([AssistantTurn(tool_calls=(program("return await tools.echo(text='c')"),)), AssistantTurn()])
    child_turn = asyncio.create_task(child.run_turn("go"))
    await asyncio.sleep(0)
    await second.run_turn("go")
    assert workspace_store(workspace).read().families() == 1  # the second family is still running
    release.set()
    await child_turn
    view = workspace_store(workspace).read()
    assert view.families() == 2 and stats(view, host, second, ECHO).used == 2


@pytest.mark.asyncio
async def test_a_session_created_but_never_started_is_not_a_sample(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace)
    host = await open_host()
    await host.start_session(model=runs("return 1"))
    root = await host.start_session(model=runs("return 1"))
    await root.fork(title="never given work")
    await host.aclose()
    assert workspace_store(workspace).read().status == "missing"
    assert user_store().read().status == "missing"


@pytest.mark.asyncio
async def test_a_member_created_but_never_started_in_a_settled_family_is_not_a_sample(
    open_host: HostFactory, workspace: Path, tmp_path: Path
) -> None:
    write_config(workspace)
    other = tmp_path / "other"
    other.mkdir()
    write_config(other)
    host = await open_host()
    root = await host.start_session(model=runs("return await tools.echo(text='here')"))
    idle = await host.fork_session(root, title="never given work", workspace=other)
    await root.run_turn("go")  # the family settles: the root started, the child never did
    here = workspace_store(workspace).read()
    assert here.families() == 1 and stats(here, host, root, ECHO).used == 1
    # The idle child's workspace had tools available only on paper: no sample there, not even a 0 %.
    assert workspace_store(other).read().status == "missing"
    user = user_store().read()
    assert user.families() == 1 and stats(user, host, idle, SPARE).available == 1


@pytest.mark.asyncio
async def test_resuming_a_family_revises_its_sample(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace)
    first = await open_host()
    root = await first.start_session(model=runs("return await tools.echo(text='before')"))
    await root.run_turn("go")
    family = root.agent.family_id
    other = await first.start_session(model=runs("return 1"))
    await other.run_turn("go")  # a later family, so a jump to the front would show
    await first.aclose()
    # Another host process (a new plugin controller): resume and use something else.
    second = await open_host()
    again = await second.resume_session(
        family, model=runs("try:\n    await tools.fail()\nexcept ToolCallError:\n    pass")
    )
    await again.run_turn("more")
    view = workspace_store(workspace).read()
    assert view.families() == 2
    assert (stats(view, second, again, ECHO).used, stats(view, second, again, FAIL).used) == (1, 1)
    assert [f.sequence for f in view.payload.families] == [1, 2]
    assert user_store().read().families() == 2


@pytest.mark.asyncio
async def test_a_child_resumed_alone_keeps_the_family_s_earlier_use(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace)
    first = await open_host()
    root = await first.start_session(model=runs("return await tools.echo(text='root')"))
    await root.run_turn("go")
    child = await root.fork(title="child")
    child.model = runs("try:\n    await tools.fail()\nexcept ToolCallError:\n    pass")
    await child.run_turn("go")
    child_id = child.agent.session_id
    await first.aclose()
    second = await open_host()
    again = await second.resume_session(child_id, model=runs("return await tools.spare()"))
    await again.run_turn("more")
    view = workspace_store(workspace).read()
    assert view.families() == 1
    used = {i: stats(view, second, again, i).used for i in (ECHO, FAIL, SPARE)}
    assert used == {ECHO: 1, FAIL: 1, SPARE: 1}


@pytest.mark.asyncio
async def test_replaying_the_same_settlement_changes_nothing(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace)
    settlements = Settlements()
    host = await open_host(plugins=[ptc_plus.plugin, settlements])
    root = await host.start_session(model=runs("return await tools.echo(text='a')"))
    await root.run_turn("go")
    store = workspace / ".ptc-plus" / "statistics.json"
    user = user_store().path
    before = (store.read_bytes(), user.read_bytes())
    assert len(settlements.seen) == 1
    for _ in range(3):
        ptc_plus.plugin.agent_host_family_settled(family=settlements.seen[0], services=host.services)
    assert (store.read_bytes(), user.read_bytes()) == before
    assert len(host.services.read_records(root.agent, "ptc-family-usage/v1")) == 1  # nor the session log


@pytest.mark.asyncio
async def test_statistics_disabled_in_the_workspace_records_nothing(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace, statistics=False)
    host = await open_host()
    root = await host.start_session(model=runs("return await tools.echo(text='a')"))
    await root.run_turn("go")
    assert workspace_store(workspace).read().status == "missing"
    assert user_store().read().status == "missing"


@pytest.mark.asyncio
async def test_a_workspace_without_management_gets_no_statistics_file(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace, management=False)
    host = await open_host()
    root = await host.start_session(model=runs("return await tools.echo(text='a')"))
    await root.run_turn("go")
    assert sorted(p.name for p in (workspace / ".ptc-plus").iterdir()) == ["config.toml"]
    assert user_store().read().status == "missing"


@pytest.mark.asyncio
async def test_a_workspace_with_no_config_records_its_families(open_host: HostFactory, workspace: Path) -> None:
    # Management and statistics are on by default (ADR 0080): no config file is needed to start learning.
    host = await open_host()
    root = await host.start_session(model=runs("return await tools.echo(text='a')"))
    await root.run_turn("go")
    view = workspace_store(workspace).read()
    assert view.status == "ok" and view.families() == 1
    assert user_store().read().status == "ok"  # share_with_user is on by default too


@pytest.mark.asyncio
async def test_a_workspace_that_does_not_share_stays_out_of_the_user_store(
    open_host: HostFactory, workspace: Path
) -> None:
    write_config(workspace, share_with_user=False)
    host = await open_host()
    root = await host.start_session(model=runs("return await tools.echo(text='a')"))
    await root.run_turn("go")
    assert workspace_store(workspace).read().families() == 1
    assert user_store().read().status == "missing"


@pytest.mark.asyncio
async def test_a_corrupt_store_is_logged_never_raised(
    open_host: HostFactory, workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write_config(workspace)
    store = workspace / ".ptc-plus" / "statistics.json"
    store.write_bytes(b'{"version": 1, "famil')
    host = await open_host()
    root = await host.start_session(model=runs("return await tools.echo(text='a')"))
    with caplog.at_level(logging.WARNING, logger="ptc_plus.statistics.observe"):
        summary = await root.run_turn("go")
    assert summary.final_text == "done"
    assert store.read_bytes() == b'{"version": 1, "famil'  # never overwritten
    assert any("not recorded" in r.getMessage() for r in caplog.records)
    assert not host.facade.reports  # nothing reached the host as a failure
    assert user_store().read().families() == 1  # the other scope still recorded it


# -- no user content -------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_no_user_text_arguments_or_results_reach_the_stores(
    open_host: HostFactory, workspace: Path, xdg: Path
) -> None:
    write_config(workspace)
    host = await open_host()
    code = (
        f"r = await tools.echo(text='{SECRET}')\n"
        f"try:\n    await tools.fail(why='{SECRET}')\nexcept ToolCallError:\n    pass\n"
        "return r"
    )
    root = await host.start_session(title=SECRET, model=runs(code))
    await root.run_turn(f"please {SECRET}")
    assert SECRET in str(settled_result(root))  # it really went through arguments and results
    files = [p for p in [*(workspace / ".ptc-plus").iterdir(), *(xdg / "ptc-plus").iterdir()] if "statistics" in p.name]
    assert len(files) == 2
    for path in files:
        data = path.read_bytes()
        assert SECRET.encode() not in data and b"echo" in data, path


# -- crediting (the pure rule) ---------------------------------------------------------------------------


def test_each_workspace_is_credited_with_what_was_available_there(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    alias = tmp_path / "alias"
    alias.symlink_to(real)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    observer = FamilyObserver()
    root = AgentRef(session_id="r", agent_id="r", family_id="r")
    child = AgentRef(session_id="c", agent_id="c", family_id="r", parent_session_id="r")
    a = Offer(identity="host:a", revision="r1", disclosure="full")
    b = Offer(identity="host:b", revision="r1", disclosure="on-demand")
    observer.hold("r", "r", AgentOffers(workspace=real_workspace(alias), config_revision="cfg", offers={"host:a": a}))
    observer.hold(
        "r",
        "c",
        AgentOffers(workspace=real_workspace(elsewhere), config_revision="cfg2", offers={"host:a": a, "host:b": b}),
    )
    observer.hold(
        "r", "i", AgentOffers(workspace=real_workspace(elsewhere), config_revision="cfg2", offers={"host:z": a})
    )
    spec_b = ToolSpec(name="b", description="")
    for n in range(10_000):
        observer.dispatching(ToolCall(call_id=f"x{n}", tool="b", arguments={}, caller=child), spec_b)
    observer.dispatching(ToolCall(call_id="y", tool="b", arguments={}, caller=root), spec_b)  # not available to root
    settled = observer.settle("r", "r", started={"r", "c"})
    assert [s.workspace for s in settled.workspaces] == [str(real), str(elsewhere)]
    at_root, at_child = settled.workspaces
    assert [(e.identity, e.used) for e in at_root.evidence] == [("host:a", False)]
    assert [(e.identity, e.used, e.disclosure) for e in at_child.evidence] == [
        ("host:a", False, "full"),
        ("host:b", True, "on-demand"),
    ]
    assert at_child.plan_config_revision == "cfg2"
    assert isinstance(at_root, FamilySample)


def test_a_store_problem_in_one_scope_never_stops_the_other(tmp_path: Path) -> None:
    sample = FamilySample(
        family_id="f",
        workspace=str(tmp_path),
        plan_config_revision="",
        evidence=(Evidence(identity="host:a", revision="r", disclosure="full", used=True),),
    )

    class Broken(StatisticsStore):
        def record(self, sample: FamilySample) -> None:
            raise StatisticsStoreCorrupt(file="x", detail="bad", kept="-")

    user = StatisticsStore(tmp_path / "user" / "statistics.json")
    problems = record_settled(
        Settled(family_id="f", workspaces=(sample,)),
        scopes=lambda ws: (True, True),
        workspace_for=lambda ws: Broken(tmp_path / "ws.json"),
        user=lambda: user,
    )
    assert len(problems) == 1 and "PTC-5002" in problems[0]
    assert user.read().families() == 1
