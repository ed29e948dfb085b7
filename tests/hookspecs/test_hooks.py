"""One contract test per hookspec: the reference host calls each seam in its documented order.

Each ``test_hook_<name>`` registers a recording plugin with the reference
host and checks, at the moment the hook runs, what the host has already
persisted or sent. A meta-test (``test_contract_meta.py``) checks that a
test exists for every hook in :mod:`hookspecs.specs`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Generator, Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest

from hookspecs import (
    AgentRef,
    CommandReceipt,
    CommandRequest,
    CommandSpec,
    CompactionInfo,
    ContextMessage,
    FamilyMember,
    FamilySettlement,
    HostServices,
    PromptContext,
    PromptSection,
    ReceiptStatus,
    Refusal,
    ResultAnnotation,
    ResultStatus,
    SessionInfo,
    SessionRecord,
    StepInfo,
    ToolCall,
    ToolContext,
    ToolDefinition,
    ToolResult,
    ToolSpec,
    TurnStart,
    TurnSummary,
    hookimpl,
)
from hookspecs.reference import AssistantTurn, ModelRequest, ReferenceHost, RequestedCall, ScriptedModel

Trace = list[tuple[str, Any]]
ECHO_SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
    "additionalProperties": False,
}


class TracingModel(ScriptedModel):
    """A scripted model that also writes each request into the shared trace."""

    def __init__(self, turns: Sequence[AssistantTurn], trace: Trace) -> None:
        super().__init__(turns)
        self.trace = trace

    async def complete(self, request: ModelRequest) -> AssistantTurn:
        self.trace.append(("model-request", len(self.requests) + 1))
        return await super().complete(request)


def answer(text: str = "", *calls: tuple[str, str, dict[str, Any]]) -> AssistantTurn:
    """An assistant turn; each call is ``(call_id, tool, arguments)``."""
    return AssistantTurn(
        text=text, tool_calls=tuple(RequestedCall(call_id=c, tool=t, arguments=a) for c, t, a in calls)
    )


def echo_tool(trace: Trace | None = None, *, name: str = "echo", fail: BaseException | None = None) -> ToolDefinition:
    async def handler(arguments: Any, context: ToolContext) -> Any:
        if trace is not None:
            trace.append(("body", context.call.call_id))
        if fail is not None:
            raise fail
        return {"echo": arguments["text"]}

    spec = ToolSpec(name=name, description="Echo the text back.", input_schema=ECHO_SCHEMA)
    return ToolDefinition(spec=spec, handler=handler)


def disk_events(path: Path) -> list[dict[str, Any]]:
    """The events that reached the log file (what a crash right now would keep)."""
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def names(trace: Trace) -> list[str]:
    return [entry[0] for entry in trace]


# --- Registration -------------------------------------------------------------


@pytest.mark.asyncio
async def test_hook_agent_host_tools(make_reference_host: Callable[..., ReferenceHost]) -> None:
    trace: Trace = []

    class Contributor:
        @hookimpl
        def agent_host_tools(self, agent: AgentRef, services: HostServices) -> Sequence[ToolDefinition]:
            trace.append(("tools", agent.session_id))
            return [echo_tool(trace)]

    model = TracingModel([answer("", ("c1", "echo", {"text": "hi"})), answer("done")], trace)
    async with make_reference_host(plugins=[Contributor()]) as host:
        session = await host.start_session(model=model)
        await session.run_turn("go")
        first, second = model.requests
        assert [s.name for s in first.tools] == ["echo"]
        assert session.surface.messages()[-2] == {"role": "tool", "tool_call_id": "c1", "content": '{"echo":"hi"}'}
        # The view is built before every model step, so each request sees the plugin's current tools.
        requests = [i for i, n in enumerate(names(trace)) if n == "model-request"]
        for before, request in zip([-1, *requests], requests, strict=False):
            assert "tools" in names(trace)[before + 1 : request]
        assert all(entry[1] == session.agent.session_id for entry in trace if entry[0] == "tools")
        assert second.tools == first.tools


@pytest.mark.asyncio
async def test_hook_agent_host_commands(make_reference_host: Callable[..., ReferenceHost]) -> None:
    class Commands:
        @hookimpl
        def agent_host_commands(self) -> Sequence[CommandSpec]:
            return [CommandSpec(name="hello", summary="say hello")]

    async with make_reference_host(plugins=[Commands()]) as host:
        table = {c.name: c.summary for c in host.command_table()}
        assert table["hello"] == "say hello"
        assert {"help", "tools", "compact"} <= set(table)
        session = await host.start_session(model=ScriptedModel([]))
        helped = session.command("/help")
        assert helped.status is ReceiptStatus.SHOWN
        assert "/hello — say hello" in helped.text.splitlines()
        unknown = session.command("/nope")
        assert unknown.status is ReceiptStatus.FAILED
        assert "/hello" in unknown.text


# --- Session lifecycle ----------------------------------------------------------


@pytest.mark.asyncio
async def test_hook_agent_host_session_start(make_reference_host: Callable[..., ReferenceHost]) -> None:
    trace: Trace = []
    seen: list[SessionInfo] = []

    class Starter:
        @hookimpl
        def agent_host_session_start(self, session: SessionInfo, services: HostServices) -> None:
            path = services.workspace / ".agent-host" / "sessions" / f"{session.agent.session_id}.jsonl"
            trace.append(("session-start", [e["type"] for e in disk_events(path)]))
            seen.append(session)
            services.append_record(session.agent, SessionRecord(kind="test/v1", payload={"n": 1}))

        @hookimpl
        def agent_host_session_resume(self, session: SessionInfo, services: HostServices) -> None:
            trace.append(("session-resume", session.agent.session_id))

    model = TracingModel([answer("hello")], trace)
    async with make_reference_host(plugins=[Starter()], user_id="u-1") as host:
        session = await host.start_session(model=model, title="first")
        assert trace == [("session-start", ["session-started"])]
        await session.run_turn("hi")
        sid = session.agent.session_id
    assert names(trace) == ["session-start", "model-request"]
    (info,) = seen
    assert info.agent == AgentRef(session_id=sid, agent_id=sid, family_id=sid)
    assert (info.user_id, info.title, info.model_route) == ("u-1", "first", "scripted")
    assert info.workspace == host.workspace

    trace.clear()
    async with make_reference_host(plugins=[Starter()]) as host:
        resumed = await host.resume_session(sid, model=ScriptedModel([]))
        assert [r.payload for r in resumed.records] == [{"n": 1}]
    assert trace == [("session-resume", sid)]  # session_start is not called on resume


@pytest.mark.asyncio
async def test_hook_agent_host_session_resume(make_reference_host: Callable[..., ReferenceHost]) -> None:
    trace: Trace = []

    class Resumer:
        @hookimpl
        def agent_host_session_start(self, session: SessionInfo, services: HostServices) -> None:
            services.append_record(session.agent, SessionRecord(kind="plan/v1", payload={"tools": ["echo"]}))

        @hookimpl
        def agent_host_session_resume(self, session: SessionInfo, services: HostServices) -> None:
            records = services.read_records(session.agent, "plan/")
            trace.append(("session-resume", [r.payload for r in records]))

    async with make_reference_host(plugins=[Resumer()]) as host:
        session = await host.start_session(model=ScriptedModel([answer("one")]))
        await session.run_turn("first")
        sid, path = session.agent.session_id, session.log.path
    assert trace == []
    with path.open("ab") as fh:
        fh.write(b'{"v": 1, "seq": 99, "ty')  # a torn tail: reported before the hook runs

    model = TracingModel([answer("two")], trace)
    async with make_reference_host(plugins=[Resumer()]) as host:
        resumed = await host.resume_session(sid, model=model)
        assert trace == [("session-resume", [{"tools": ["echo"]}])]
        assert resumed.turn == 1
        assert resumed.diagnostics and str(path.name) in resumed.diagnostics[0]
        await resumed.run_turn("second")
    assert names(trace) == ["session-resume", "model-request"]


@pytest.mark.asyncio
async def test_hook_agent_host_agent_fork(make_reference_host: Callable[..., ReferenceHost]) -> None:
    trace: Trace = []

    class Forks:
        @hookimpl
        def agent_host_agent_fork(self, parent: SessionInfo, child: SessionInfo, services: HostServices) -> None:
            child_log = services.workspace / ".agent-host" / "sessions" / f"{child.agent.session_id}.jsonl"
            parent_log = services.workspace / ".agent-host" / "sessions" / f"{parent.agent.session_id}.jsonl"
            trace.append(
                (
                    "fork",
                    (
                        parent.agent.session_id,
                        child.agent.family_id,
                        child.agent.parent_session_id,
                        [e["type"] for e in disk_events(child_log)],
                        disk_events(parent_log)[-1]["type"],
                    ),
                )
            )

        @hookimpl
        def agent_host_session_start(self, session: SessionInfo, services: HostServices) -> None:
            trace.append(("session-start", session.agent.session_id))

    async with make_reference_host(plugins=[Forks()], tools=[echo_tool()]) as host:
        parent = await host.start_session(model=ScriptedModel([]))
        child = await parent.fork(title="helper")
    pid, cid = parent.agent.session_id, child.agent.session_id
    assert trace == [
        ("session-start", pid),
        ("fork", (pid, pid, pid, ["session-started"], "child-forked")),
        ("session-start", cid),
    ]


@pytest.mark.asyncio
async def test_hook_agent_host_turn_started(make_reference_host: Callable[..., ReferenceHost]) -> None:
    """Contract 1.6: each turn's user text and grants, before anything of the turn (its tool view, its request)."""
    order: list[str] = []
    starts: list[TurnStart] = []

    class Started:
        @hookimpl
        def agent_host_turn_started(self, turn: TurnStart) -> None:
            starts.append(turn)
            order.append("turn-started")

        @hookimpl
        def agent_host_tools(self, agent: AgentRef) -> list[ToolDefinition]:
            order.append("tools")
            return []

    model = ScriptedModel([AssistantTurn(text="a"), AssistantTurn(text="b")])
    async with make_reference_host(plugins=[Started()]) as host:
        session = await host.start_session(model=model)
        order.clear()
        await session.run_turn("first, please")
        assert order[0] == "turn-started"
        await session.run_turn("/ralph second", grants=("ralph",))
    assert [(t.turn, t.user_text, t.grants) for t in starts] == [
        (1, "first, please", ()),
        (2, "/ralph second", ("ralph",)),
    ]
    assert all(t.agent == session.agent for t in starts)


@pytest.mark.asyncio
async def test_hook_agent_host_turn_ended(make_reference_host: Callable[..., ReferenceHost]) -> None:
    """Contract 1.7: once per started turn however it ended — after ``turn_settled``, or after a failure."""
    order: list[tuple[str, int]] = []

    class Ended:
        @hookimpl
        def agent_host_turn_ended(self, agent: AgentRef, turn: int) -> None:
            assert agent == session.agent
            order.append(("ended", turn))
            raise RuntimeError("reported, never raised")

        @hookimpl
        def agent_host_turn_settled(self, summary: TurnSummary) -> None:
            order.append(("settled", summary.turn))

    class FailsSecond(ScriptedModel):
        async def complete(self, request: ModelRequest) -> AssistantTurn:
            answer = await super().complete(request)
            if len(self.requests) == 2:
                raise RuntimeError("the model route failed")
            return answer

    model = FailsSecond([AssistantTurn(text="a"), AssistantTurn(text="never"), AssistantTurn(text="c")])
    async with make_reference_host(plugins=[Ended()]) as host:
        session = await host.start_session(model=model)
        await session.run_turn("first")
        with pytest.raises(RuntimeError, match="route failed"):
            await session.run_turn("second")
        assert order == [("settled", 1), ("ended", 1), ("ended", 2)]  # the failed turn's end is reported
        await session.run_turn("third")
        assert any("reported, never raised" in r for r in host.facade.reports)
    assert order[3:] == [("settled", 3), ("ended", 3)]


@pytest.mark.asyncio
async def test_hook_agent_host_turn_settled(make_reference_host: Callable[..., ReferenceHost]) -> None:
    trace: Trace = []
    summaries: list[TurnSummary] = []

    class Settled:
        @hookimpl
        def agent_host_turn_settled(self, summary: TurnSummary, services: HostServices) -> None:
            path = services.workspace / ".agent-host" / "sessions" / f"{summary.agent.session_id}.jsonl"
            last_assistant = [e for e in disk_events(path) if e["type"] == "assistant-message"][-1]
            trace.append(("turn-settled", (last_assistant["data"]["text"], last_assistant["data"]["tool_calls"])))
            summaries.append(summary)
            raise RuntimeError("reported, never raised")

    class AlsoSettled:  # registered first, so called after Settled raised: it still runs
        @hookimpl
        def agent_host_turn_settled(self, summary: TurnSummary, services: HostServices) -> None:
            trace.append(("also-settled", summary.turn))

    model = TracingModel(
        [answer("", ("a", "echo", {"text": "1"}), ("b", "echo", {"text": "2"})), answer("all done")], trace
    )
    async with make_reference_host(plugins=[AlsoSettled(), Settled()], tools=[echo_tool(trace)]) as host:
        session = await host.start_session(model=model)
        summary = await session.run_turn("go")
        assert any("RuntimeError: reported, never raised" in r for r in host.facade.reports)
    assert names(trace) == ["model-request", "body", "body", "model-request", "turn-settled", "also-settled"]
    assert trace[-2] == ("turn-settled", ("all done", []))
    assert summaries == [summary]
    assert (summary.turn, summary.steps, summary.tool_calls, summary.final_text) == (1, 2, 2, "all done")


@pytest.mark.asyncio
async def test_hook_agent_host_family_settled(make_reference_host: Callable[..., ReferenceHost]) -> None:
    trace: Trace = []
    settled: list[FamilySettlement] = []

    class Settled:
        @hookimpl
        def agent_host_turn_settled(self, summary: TurnSummary, services: HostServices) -> None:
            trace.append(("turn-settled", summary.turn))

        @hookimpl
        def agent_host_family_settled(self, family: FamilySettlement, services: HostServices) -> None:
            path = services.workspace / ".agent-host" / "sessions" / f"{family.family_id}.jsonl"
            last = disk_events(path)[-1]
            trace.append(("family-settled", (last["type"], last["data"]["generation"])))
            settled.append(family)
            raise RuntimeError("reported, never raised")

    class AlsoSettled:  # registered first, so called after Settled raised: it still runs
        @hookimpl
        def agent_host_family_settled(self, family: FamilySettlement, services: HostServices) -> None:
            trace.append(("also-settled", family.generation))

    model = TracingModel([answer("", ("a", "echo", {"text": "1"})), answer("one"), answer("two")], trace)
    async with make_reference_host(plugins=[AlsoSettled(), Settled()], tools=[echo_tool(trace)]) as host:
        root = await host.start_session(model=model)
        child = await root.fork(title="never started")
        root.command("/help")
        assert trace == []  # created, forked, a command: nothing started, nothing settled
        await root.run_turn("first")
        await root.run_turn("second")
        assert any("RuntimeError: reported, never raised" in r for r in host.facade.reports)
    assert names(trace) == [
        *("model-request", "body", "model-request", "turn-settled", "family-settled", "also-settled"),
        *("model-request", "turn-settled", "family-settled", "also-settled"),
    ]
    # Persisted before the hook ran, after the turn settled; once per settlement, the generation growing.
    assert [entry for entry in trace if entry[0] == "family-settled"] == [
        ("family-settled", ("family-settled", 1)),
        ("family-settled", ("family-settled", 2)),
    ]
    first, second = settled
    members = (
        FamilyMember(agent=root.agent, workspace=host.workspace, started=True),
        FamilyMember(agent=child.agent, workspace=host.workspace, started=False),
    )
    assert first == FamilySettlement(family_id=root.agent.session_id, root=root.agent, members=members, generation=1)
    assert second == FamilySettlement(family_id=root.agent.session_id, root=root.agent, members=members, generation=2)
    assert first.agents == (root.agent, child.agent) and first.started


@pytest.mark.asyncio
async def test_hook_agent_host_compaction(make_reference_host: Callable[..., ReferenceHost]) -> None:
    seen: list[tuple[CompactionInfo, list[str], tuple[dict[str, Any], ...]]] = []

    class Compactor:
        @hookimpl
        def agent_host_compaction(self, compaction: CompactionInfo, services: HostServices) -> None:
            path = services.workspace / ".agent-host" / "sessions" / f"{compaction.agent.session_id}.jsonl"
            session = host.session(compaction.agent.session_id)
            seen.append((compaction, [e["type"] for e in disk_events(path)], session.surface.messages()))

    model = ScriptedModel([answer("first"), answer("", ("k1", "echo", {"text": "x"})), answer("second")])
    async with make_reference_host(plugins=[Compactor()], tools=[echo_tool()]) as host:
        session = await host.start_session(model=model)
        await session.run_turn("one")
        await session.run_turn("two")
        receipt = session.command("/compact the story so far")
    assert receipt.status is ReceiptStatus.APPLIED
    ((info, types, surface),) = seen
    assert info.summary == "the story so far"
    assert info.kept_call_ids == ("k1",)
    assert info.kept_provenances == ()  # since 1.3 the host says which context messages survived: here none
    assert types[-1] == "compaction"
    # The surface was already replaced when the hook ran: summary first, then the kept calls only.
    assert surface[0] == {"role": "user", "content": "the story so far"}
    assert [m["role"] for m in surface[1:]] == ["assistant", "tool"]


@pytest.mark.asyncio
async def test_hook_agent_host_shutdown(make_reference_host: Callable[..., ReferenceHost]) -> None:
    calls: list[str] = []
    release = asyncio.Event()

    class Draining:
        @hookimpl
        def agent_host_shutdown(self, services: HostServices) -> Awaitable[None] | None:
            calls.append("draining")

            async def drain() -> None:
                await release.wait()  # live work still finishing
                services.append_record(agent, SessionRecord(kind="drained/v1", payload={}))
                raise RuntimeError("reported from the awaitable")

            return drain()

    class Shutdown:
        @hookimpl
        def agent_host_shutdown(self, services: HostServices) -> None:
            # Sessions are still open while plugins shut down: a plugin can persist its last records.
            services.append_record(agent, SessionRecord(kind="bye/v1", payload={}))
            calls.append("shutdown")
            raise RuntimeError("reported, shutdown continues")

    host = make_reference_host(plugins=[Draining(), Shutdown()])
    session = await host.start_session(model=ScriptedModel([]))
    agent = session.agent
    assert calls == []
    closing = asyncio.create_task(host.aclose())
    for _ in range(20):
        await asyncio.sleep(0)
    # Draining's awaitable is still pending: the host has not closed the session logs yet.
    # Shutdown (registered last, called first) raised: Draining still ran, and its awaitable is pending,
    # so the host has not closed the session logs yet.
    assert not closing.done() and calls == ["shutdown", "draining"]
    release.set()
    await asyncio.wait_for(closing, timeout=600)  # a hang guard, not a speed check
    await host.aclose()  # idempotent: the hook runs once
    assert calls == ["shutdown", "draining"]
    assert [r for r in host.facade.reports if r.startswith("agent_host_shutdown")] == [
        "agent_host_shutdown: RuntimeError: reported, shutdown continues",
        "agent_host_shutdown: RuntimeError: reported from the awaitable",
    ]
    assert disk_events(session.log.path)[-1]["data"]["kind"] == "drained/v1"
    # Every session log was closed after the hook: a new host can open it.
    async with make_reference_host() as again:
        resumed = await again.resume_session(agent.session_id)
        assert [r.kind for r in resumed.records] == ["bye/v1", "drained/v1"]


# --- Model step -------------------------------------------------------------------


@pytest.mark.asyncio
async def test_hook_agent_host_prompt_sections(make_reference_host: Callable[..., ReferenceHost]) -> None:
    trace: Trace = []

    class Sections:
        @hookimpl
        def agent_host_prompt_sections(self, context: PromptContext) -> Sequence[PromptSection]:
            trace.append(("sections", (context.model_route, [t.name for t in context.tools])))
            return [
                PromptSection(name="zeta", order=200, text="ZETA"),
                PromptSection(name="alpha", order=200, text="ALPHA"),
                PromptSection(name="early", order=50, text="EARLY"),
            ]

    model = TracingModel([answer("", ("c", "echo", {"text": "x"})), answer("done")], trace)
    async with make_reference_host(plugins=[Sections()], tools=[echo_tool()]) as host:
        session = await host.start_session(model=model)
        await session.run_turn("go")
        other = await host.start_session(model=ScriptedModel([]))
        assert [s.name for s in session.prompt_sections()] == ["host", "early", "alpha", "zeta"]
        # Stable prefix: same config, route and view give the same bytes, step after step and across sessions.
        assert other.system_prompt() == session.system_prompt() == model.requests[0].system
    first, second = model.requests
    assert first.system == second.system
    assert first.system.endswith("EARLY\n\nALPHA\n\nZETA")
    request_positions = [i for i, n in enumerate(names(trace)) if n == "model-request"]
    assert all(names(trace)[i - 1] == "sections" for i in request_positions)
    assert trace[0] == ("sections", ("scripted", ["echo"]))


@pytest.mark.asyncio
async def test_hook_agent_host_model_tools(make_reference_host: Callable[..., ReferenceHost]) -> None:
    trace: Trace = []

    class Sections:
        @hookimpl
        def agent_host_prompt_sections(self, context: PromptContext) -> Sequence[PromptSection]:
            trace.append(("sections", None))
            return []

    class Fallback:  # registered first, so asked last: never reached once Chooser answers
        @hookimpl
        def agent_host_model_tools(self, context: PromptContext) -> Sequence[str] | None:
            trace.append(("fallback", None))
            return ["gamma"]

    class Chooser:
        @hookimpl
        def agent_host_model_tools(self, context: PromptContext) -> Sequence[str] | None:
            trace.append(("model-tools", [t.name for t in context.tools]))
            return ["gamma", "nope", "alpha", "gamma"]  # order kept, unknown names and repeats dropped

    async def outer(arguments: Any, context: ToolContext) -> Any:
        call = ToolCall(
            call_id=f"{context.call.call_id}:t:1",
            tool="beta",
            arguments={"text": "nested"},
            caller=context.call.caller,
            parent_call_id=context.call.call_id,
        )
        return (await context.services.dispatch(call)).value

    tools = [
        echo_tool(name="alpha"),
        echo_tool(name="beta"),
        ToolDefinition(spec=ToolSpec(name="gamma", description="g"), handler=outer),
    ]
    model = TracingModel([answer("", ("g", "gamma", {})), answer("done")], trace)
    async with make_reference_host(plugins=[Fallback(), Sections(), Chooser()], tools=tools) as host:
        session = await host.start_session(model=model)
        await session.run_turn("go")
        assert host.view(session.agent).names() == ["alpha", "beta", "gamma"]
    assert names(trace) == ["sections", "model-tools", "model-request"] * 2
    assert trace[1] == ("model-tools", ["alpha", "beta", "gamma"])
    assert [[t.name for t in r.tools] for r in model.requests] == [["gamma", "alpha"]] * 2
    # A tool left out of the model's tools stays in the view: nested dispatch still reaches it.
    assert model.requests[1].messages[-1]["content"] == '{"echo":"nested"}'

    async with make_reference_host(tools=tools) as host:  # no implementation: the whole view, host order
        session = await host.start_session()
        assert [t.name for t in session.model_tools()] == ["alpha", "beta", "gamma"]


@pytest.mark.asyncio
async def test_hook_agent_host_skill_catalog(make_reference_host: Callable[..., ReferenceHost], tmp_path: Path) -> None:
    trace: Trace = []
    root = tmp_path / "skills"
    for name, description in (("pdf", "Fill PDF forms"), ("csv", "Clean CSV files")):
        (root / name).mkdir(parents=True)
        (root / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\nbody\n")

    class Fallback:
        @hookimpl
        def agent_host_skill_catalog(self, context: PromptContext) -> Sequence[str] | None:
            trace.append(("fallback", None))
            return None

    class Chooser:
        @hookimpl
        def agent_host_skill_catalog(self, context: PromptContext) -> Sequence[str] | None:
            trace.append(("skill-catalog", [t.name for t in context.tools]))
            return ["pdf", "no-such-skill"]

    model = TracingModel([answer("done")], trace)
    async with make_reference_host(plugins=[Fallback(), Chooser()], skills_dirs=[root]) as host:
        session = await host.start_session(model=model)
        await session.run_turn("go")
        # Left out of the catalog section, still offered by the host (loadable unless a guard refuses).
        assert [s.name for s in host.services.skills(session.agent)] == ["csv", "pdf"]
    # firstresult: the later-registered Chooser runs first and the Fallback is never asked.
    assert names(trace) == ["skill-catalog", "model-request"]
    assert "load_skill" in trace[0][1]
    system = model.requests[0].system
    assert "- pdf: Fill PDF forms" in system and "csv" not in system

    async with make_reference_host(skills_dirs=[root]) as host:  # no implementation: every skill is listed
        session = await host.start_session()
        assert "- csv: Clean CSV files\n- pdf: Fill PDF forms" in session.system_prompt()

    class Nothing:
        @hookimpl
        def agent_host_skill_catalog(self, context: PromptContext) -> Sequence[str] | None:
            return []

    async with make_reference_host(plugins=[Nothing()], skills_dirs=[root]) as host:  # empty: no section at all
        session = await host.start_session()
        assert "host-skills" not in [s.name for s in session.prompt_sections()]


@pytest.mark.asyncio
async def test_hook_agent_host_context_messages(make_reference_host: Callable[..., ReferenceHost]) -> None:
    trace: Trace = []

    class Catalog:
        @hookimpl
        def agent_host_context_messages(self, step: StepInfo, services: HostServices) -> Sequence[ContextMessage]:
            trace.append(("context", (step.turn, step.step)))
            if (step.turn, step.step) == (1, 1):
                return [
                    ContextMessage(provenance="catalog", text="catalog v1"),
                    ContextMessage(provenance="x", text="X"),
                ]
            if (step.turn, step.step) == (1, 2):
                return [ContextMessage(provenance="catalog", text="catalog v2")]
            return []

    model = TracingModel([answer("", ("c", "echo", {"text": "x"})), answer("done"), answer("again")], trace)
    async with make_reference_host(plugins=[Catalog()], tools=[echo_tool()]) as host:
        session = await host.start_session(model=model)
        await session.run_turn("go")
        await session.run_turn("more")
        live = session.surface.messages()
        sid, path = session.agent.session_id, session.log.path
    assert names(trace) == ["context", "model-request"] * 3
    first, second, third = model.requests
    # Committed at the step and visible in that same request, before the new work (the user's
    # message), never in the system prompt.
    assert first.messages == (
        {"role": "system", "content": "catalog v1"},
        {"role": "system", "content": "X"},
        {"role": "user", "content": "go"},
    )
    assert "catalog" not in first.system and first.system == second.system == third.system
    # A later message with the same provenance supersedes the earlier one on the surface.
    contents = [m["content"] for m in second.messages]
    assert "catalog v2" in contents and "catalog v1" not in contents and "X" in contents
    assert [m["content"] for m in third.messages].count("catalog v2") == 1
    # The raw log keeps both, persisted with their step.
    logged = [e["data"] for e in disk_events(path) if e["type"] == "context-message"]
    assert [(d["provenance"], d["text"], d["turn"], d["step"]) for d in logged] == [
        ("catalog", "catalog v1", 1, 1),
        ("x", "X", 1, 1),
        ("catalog", "catalog v2", 1, 2),
    ]
    async with make_reference_host() as host:
        resumed = await host.resume_session(sid)
        assert resumed.surface.messages() == live


@pytest.mark.asyncio
async def test_context_messages_failure_commits_nothing(
    make_reference_host: Callable[..., ReferenceHost],
) -> None:
    class Broken:
        @hookimpl
        def agent_host_context_messages(self, step: StepInfo, services: HostServices) -> Sequence[ContextMessage]:
            raise RuntimeError("no catalog")

    model = ScriptedModel([answer("never")])
    async with make_reference_host(plugins=[Broken()]) as host:
        session = await host.start_session(model=model)
        with pytest.raises(RuntimeError, match="no catalog"):
            await session.run_turn("go")
        assert model.requests == []
        assert not list(session.log.of_type("context-message"))


# --- Tool dispatch ------------------------------------------------------------------


@pytest.mark.asyncio
async def test_hook_agent_host_guard(make_reference_host: Callable[..., ReferenceHost]) -> None:
    trace: Trace = []

    class LaterGuard:  # registered first, so called second: pre-empted when the first refuses
        @hookimpl
        def agent_host_guard(self, call: ToolCall, spec: ToolSpec, services: HostServices) -> Refusal | None:
            trace.append(("later-guard", call.call_id))
            return None

    class Guard:
        @hookimpl
        def agent_host_guard(self, call: ToolCall, spec: ToolSpec, services: HostServices) -> Refusal | None:
            trace.append(("guard", (call.call_id, dict(call.arguments), spec.name)))
            if call.arguments["text"] == "forbidden":
                return Refusal(code="policy", reason="not that")
            return None

        @hookimpl(wrapper=True)
        def agent_host_tool_execute(
            self, call: ToolCall, spec: ToolSpec, context: ToolContext
        ) -> Generator[None, ToolResult, ToolResult]:
            trace.append(("pre-execute", call.call_id))
            return (yield)

    model = ScriptedModel(
        [
            answer(
                "",
                ("ok", "echo", {"text": "fine"}),
                ("no", "echo", {"text": "forbidden"}),
                ("bad", "echo", {"text": 3}),
            ),
            answer("done"),
        ]
    )
    async with make_reference_host(plugins=[LaterGuard(), Guard()], tools=[echo_tool(trace)]) as host:
        session = await host.start_session(model=model)
        await session.run_turn("go")
        settled = {e.data["call_id"]: e.data["result"] for e in session.log.of_type("tool-settled")}
        started = [e.data["call_id"] for e in session.log.of_type("tool-started")]
    # Validation first: the invalid call never reaches a guard. The guard runs before tool-execute.
    assert trace == [
        ("guard", ("ok", {"text": "fine"}, "echo")),
        ("later-guard", "ok"),
        ("guard", ("no", {"text": "forbidden"}, "echo")),
        ("pre-execute", "ok"),
        ("body", "ok"),
    ]
    assert started == ["ok"]
    assert settled["no"]["status"] == "error" and settled["no"]["dispatched"] is False
    assert settled["no"]["error"]["code"] == "refused" and "policy: not that" in settled["no"]["error"]["message"]
    assert settled["bad"]["error"]["code"] == "invalid-arguments" and settled["bad"]["dispatched"] is False
    assert settled["ok"]["status"] == "ok"


@pytest.mark.asyncio
async def test_guard_exception_refuses(make_reference_host: Callable[..., ReferenceHost]) -> None:
    class Crashing:
        @hookimpl
        def agent_host_guard(self, call: ToolCall, spec: ToolSpec, services: HostServices) -> Refusal | None:
            raise ValueError("guard bug")

    ran: Trace = []
    async with make_reference_host(plugins=[Crashing()], tools=[echo_tool(ran)]) as host:
        session = await host.start_session()
        result = await session.call_tool("echo", {"text": "x"})
    assert ran == []
    assert result.error is not None and result.error.code == "refused" and not result.dispatched
    assert "guard-error" in result.error.message


@pytest.mark.asyncio
async def test_hook_agent_host_tool_execute(make_reference_host: Callable[..., ReferenceHost]) -> None:
    trace: Trace = []

    class Outer:
        @hookimpl(wrapper=True)
        def agent_host_tool_execute(
            self, call: ToolCall, spec: ToolSpec, context: ToolContext
        ) -> Generator[None, ToolResult, ToolResult]:
            trace.append(("outer-pre", (call.call_id, dict(call.arguments), spec.name, context.call == call)))
            result = yield
            trace.append(("outer-post", result.value))
            return result

    class Inner:  # registered first, so it wraps closer to the body (pluggy calls LIFO)
        @hookimpl(wrapper=True)
        def agent_host_tool_execute(
            self, call: ToolCall, spec: ToolSpec, context: ToolContext
        ) -> Generator[None, ToolResult, ToolResult]:
            trace.append(("inner-pre", call.call_id))
            try:
                result = yield
            except RuntimeError as exc:
                trace.append(("inner-saw-exception", str(exc)))
                raise
            trace.append(("inner-post", result.value))
            if call.arguments["text"] == "replace":
                return ToolResult(call_id=call.call_id, tool=call.tool, status=ResultStatus.OK, value="replaced")
            return result

    tools = [echo_tool(trace), echo_tool(trace, name="boom", fail=RuntimeError("kaput"))]
    async with make_reference_host(plugins=[Inner(), Outer()], tools=tools) as host:
        session = await host.start_session(session_id="s-1")
        plain = await session.call_tool("echo", {"text": "hi"})
        assert trace == [
            ("outer-pre", ("direct-1@s-1", {"text": "hi"}, "echo", True)),
            ("inner-pre", "direct-1@s-1"),
            ("body", "direct-1@s-1"),
            ("inner-post", {"echo": "hi"}),
            ("outer-post", {"echo": "hi"}),
        ]
        assert plain.value == {"echo": "hi"}

        trace.clear()
        replaced = await session.call_tool("echo", {"text": "replace"})
        assert replaced.value == "replaced"
        assert trace[-1] == ("outer-post", "replaced")  # outer wrappers see the replacement

        trace.clear()
        failed = await session.call_tool("boom", {"text": "x"})
        assert names(trace) == ["outer-pre", "inner-pre", "body", "inner-saw-exception"]
        assert failed.status is ResultStatus.ERROR and failed.dispatched
        assert failed.error is not None and failed.error.code == "tool-exception"
        assert "RuntimeError: kaput" in failed.error.message


@pytest.mark.asyncio
async def test_tool_execute_wrapper_recovers_exception(
    make_reference_host: Callable[..., ReferenceHost],
) -> None:
    class Recover:
        @hookimpl(wrapper=True)
        def agent_host_tool_execute(
            self, call: ToolCall, spec: ToolSpec, context: ToolContext
        ) -> Generator[None, ToolResult, ToolResult]:
            try:
                return (yield)
            except RuntimeError as exc:
                return ToolResult(call_id=call.call_id, tool=call.tool, status=ResultStatus.OK, value=f"saved {exc}")

    async with make_reference_host(plugins=[Recover()], tools=[echo_tool(fail=RuntimeError("kaput"))]) as host:
        session = await host.start_session()
        result = await session.call_tool("echo", {"text": "x"})
    assert result.ok and result.value == "saved kaput"


@pytest.mark.asyncio
async def test_tool_execute_firstresult(make_reference_host: Callable[..., ReferenceHost]) -> None:
    trace: Trace = []

    class Shadowed:  # registered first, so called after Owner: never reached
        @hookimpl
        def agent_host_tool_execute(self, call: ToolCall, spec: ToolSpec, context: ToolContext) -> ToolResult | None:
            trace.append(("shadowed", call.call_id))
            return ToolResult(call_id=call.call_id, tool=call.tool, status=ResultStatus.OK, value="shadowed")

    class Owner:
        @hookimpl
        async def agent_host_tool_execute(
            self, call: ToolCall, spec: ToolSpec, context: ToolContext
        ) -> ToolResult | None:
            trace.append(("owner", call.call_id))
            if call.arguments["text"] != "mine":
                return None
            return ToolResult(call_id=call.call_id, tool=call.tool, status=ResultStatus.OK, value="owned")

    async with make_reference_host(plugins=[Shadowed(), Owner()], tools=[echo_tool(trace)]) as host:
        session = await host.start_session(session_id="s-1")
        owned = await session.call_tool("echo", {"text": "mine"})
        assert owned.value == "owned"
        assert trace == [("owner", "direct-1@s-1")]  # neither Shadowed nor the host's body ran
        trace.clear()
        passed = await session.call_tool("echo", {"text": "other"})
    assert passed.value == "shadowed"
    assert trace == [("owner", "direct-2@s-1"), ("shadowed", "direct-2@s-1")]


@pytest.mark.asyncio
async def test_hook_agent_host_tool_result(make_reference_host: Callable[..., ReferenceHost]) -> None:
    trace: Trace = []
    calls_seen: list[ToolCall] = []

    class First:  # registered first, so called last
        @hookimpl
        def agent_host_tool_result(
            self, call: ToolCall, result: ToolResult, services: HostServices
        ) -> ResultAnnotation | None:
            trace.append(("result-first", result.call_id))
            return ResultAnnotation(metadata={"shared": "first", "only-first": 1}, presentation="from First")

    class Second:
        @hookimpl
        def agent_host_tool_result(
            self, call: ToolCall, result: ToolResult, services: HostServices
        ) -> ResultAnnotation | None:
            session = host.session(call.caller.session_id)
            settled = [e.data["call_id"] for e in session.log.of_type("tool-settled")]
            trace.append(("result-second", (result.call_id, result.value, settled)))
            calls_seen.append(call)
            if call.arguments["text"] == "quiet":
                return None
            return ResultAnnotation(metadata={"shared": "second"}, presentation=f"shown: {result.value['echo']}")

    model = TracingModel(
        [answer("", ("a", "echo", {"text": "loud"}), ("b", "echo", {"text": "quiet"})), answer("done")], trace
    )
    async with make_reference_host(plugins=[First(), Second()], tools=[echo_tool(trace)]) as host:
        session = await host.start_session(model=model)
        await session.run_turn("go")
        settled = {e.data["call_id"]: e.data["result"] for e in session.log.of_type("tool-settled")}
    # After each body, in commit order, before the result is logged or sent to the model.
    assert names(trace) == [
        "model-request",
        "body",
        "body",
        "result-second",
        "result-first",
        "result-second",
        "result-first",
        "model-request",
    ]
    assert trace[3] == ("result-second", ("a", {"echo": "loud"}, []))
    assert trace[5] == ("result-second", ("b", {"echo": "quiet"}, ["a"]))
    assert [c.call_id for c in calls_seen] == ["a", "b"]
    # Metadata merged in hook-call order (later keys win); the first presentation wins; value untouched.
    assert settled["a"]["metadata"] == {"shared": "first", "only-first": 1}
    assert settled["a"]["presentation"] == "shown: loud"
    assert settled["a"]["value"] == {"echo": "loud"}
    assert settled["b"]["presentation"] == "from First"
    assert settled["b"]["value"] == {"echo": "quiet"}
    tool_messages = [m for m in model.requests[1].messages if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == ["shown: loud", "from First"]


@pytest.mark.asyncio
async def test_tool_result_exception_leaves_result_unannotated(
    make_reference_host: Callable[..., ReferenceHost],
) -> None:
    class Broken:
        @hookimpl
        def agent_host_tool_result(
            self, call: ToolCall, result: ToolResult, services: HostServices
        ) -> ResultAnnotation | None:
            raise KeyError("oops")

    async with make_reference_host(plugins=[Broken()], tools=[echo_tool()]) as host:
        session = await host.start_session()
        result = await session.call_tool("echo", {"text": "x"})
        assert any(r.startswith("agent_host_tool_result: KeyError") for r in host.facade.reports)
    assert result.ok and result.value == {"echo": "x"}
    assert result.metadata == {} and result.presentation is None


# --- Commands -----------------------------------------------------------------------


@pytest.mark.asyncio
async def test_hook_agent_host_command(make_reference_host: Callable[..., ReferenceHost]) -> None:
    trace: Trace = []

    class Fallback:  # registered first, so asked last
        @hookimpl
        def agent_host_command(self, request: CommandRequest, services: HostServices) -> CommandReceipt | None:
            trace.append(("fallback", request.name))
            if request.name == "greet":
                return CommandReceipt(status=ReceiptStatus.SHOWN, text="fallback greets")
            return None

    class Greeter:
        @hookimpl
        def agent_host_commands(self) -> Sequence[CommandSpec]:
            return [CommandSpec(name="greet", summary="greet someone"), CommandSpec(name="crash", summary="fails")]

        @hookimpl
        def agent_host_command(self, request: CommandRequest, services: HostServices) -> CommandReceipt | None:
            trace.append(("greeter", (request.name, request.args, request.agent.session_id)))
            if request.name == "crash":
                raise RuntimeError("bad day")
            if request.name == "greet":
                return CommandReceipt(status=ReceiptStatus.SHOWN, text=f"hello {' '.join(request.args)}")
            return None

    model = ScriptedModel([])
    async with make_reference_host(plugins=[Fallback(), Greeter()]) as host:
        session = await host.start_session(model=model)
        sid = session.agent.session_id
        greeted = session.command("/greet 'dear reader'")
        assert (greeted.status, greeted.text) == (ReceiptStatus.SHOWN, "hello dear reader")
        assert trace == [("greeter", ("greet", ("dear reader",), sid))]  # first non-None stops the chain
        crashed = session.command("/crash")
        assert crashed.status is ReceiptStatus.FAILED and "RuntimeError: bad day" in crashed.text
        trace.clear()
        tools = session.command("/tools")
        assert tools.status is ReceiptStatus.SHOWN
        assert names(trace) == ["greeter", "fallback"]  # both declined, the host's own handler answered
        logged = [(e.data["name"], e.data["status"]) for e in session.log.of_type("command")]
    assert logged == [("greet", "shown"), ("crash", "failed"), ("tools", "shown")]
    assert model.requests == []
