"""The dispatch pipeline: nested calls through host services, guards, abandonment, argument copies, cancel."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import orjson
import pytest

from hookspecs import (
    Concurrency,
    HostServices,
    PromptContext,
    Refusal,
    ResultAnnotation,
    ResultStatus,
    ToolCall,
    ToolContext,
    ToolDefinition,
    ToolResult,
    ToolSpec,
    hookimpl,
)
from hookspecs.reference import AssistantTurn, ReferenceHost, RequestedCall, ScriptedModel, Session

T = TypeVar("T")
Behaviour = Callable[[Any, ToolContext], Awaitable[Any]]
N_SCHEMA = {
    "type": "object",
    "properties": {"n": {"type": "integer"}},
    "required": ["n"],
    "additionalProperties": False,
}


async def bounded(awaitable: Awaitable[T]) -> T:
    """Hang guard only (a deadlock fails instead of hanging the suite); never a timing assertion."""
    return await asyncio.wait_for(awaitable, timeout=120)


async def spin(rounds: int = 20) -> None:
    for _ in range(rounds):
        await asyncio.sleep(0)


def tool(
    name: str, behaviour: Behaviour, *, schema: dict[str, Any] | None = None, exclusive: bool = False
) -> ToolDefinition:
    spec = ToolSpec(
        name=name,
        description=f"The {name} test tool.",
        input_schema=schema or {"type": "object"},
        concurrency=Concurrency.EXCLUSIVE if exclusive else Concurrency.PARALLEL,
    )
    return ToolDefinition(spec=spec, handler=behaviour)


def nested(context: ToolContext, n: int, tool_name: str, arguments: dict[str, Any]) -> ToolCall:
    return ToolCall(
        call_id=f"{context.call.call_id}:t:{n}",
        tool=tool_name,
        arguments=arguments,
        caller=context.call.caller,
        parent_call_id=context.call.call_id,
    )


async def inner(arguments: Any, context: ToolContext) -> Any:
    return {"n": arguments["n"], "parent": context.call.parent_call_id}


def events(session: Session, *types: str) -> list[tuple[str, dict[str, Any]]]:
    return [(e.type, e.data) for e in session.log.events if e.type in types]


def disk(session: Session) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in session.log.path.read_bytes().splitlines()]


@pytest.mark.asyncio
async def test_nested_calls_carry_ids_run_the_pipeline_and_stay_off_the_surface(
    make_reference_host: Callable[..., ReferenceHost],
) -> None:
    annotated: list[str] = []

    class Annotate:
        @hookimpl
        def agent_host_tool_result(
            self, call: ToolCall, result: ToolResult, services: HostServices
        ) -> ResultAnnotation | None:
            annotated.append(call.call_id)
            return None

    async def outer(arguments: Any, context: ToolContext) -> Any:
        first = await context.services.dispatch(nested(context, 1, "inner", {"n": 1}))
        more = await asyncio.gather(
            context.services.dispatch(nested(context, 2, "inner", {"n": 2})),
            context.services.dispatch(nested(context, 3, "inner", {"n": 3})),
        )
        return [r.value for r in (first, *more)] + [[r.call_id for r in (first, *more)]]

    model = ScriptedModel(
        [AssistantTurn(tool_calls=(RequestedCall(call_id="o", tool="outer", arguments={}),)), AssistantTurn(text="ok")]
    )
    tools = [tool("outer", outer), tool("inner", inner, schema=N_SCHEMA)]
    async with make_reference_host(tools=tools, plugins=[Annotate()]) as host:
        session = await host.start_session(model=model)
        await session.run_turn("go")
        log = events(session, "tool-started", "tool-settled")
    *values, ids = orjson.loads(model.requests[1].messages[-1]["content"])
    assert ids == ["o:t:1", "o:t:2", "o:t:3"]
    assert values == [{"n": n, "parent": "o"} for n in (1, 2, 3)]
    assert [(t, d["call_id"]) for t, d in log] == [
        ("tool-started", "o"),
        ("tool-started", "o:t:1"),
        ("tool-settled", "o:t:1"),
        ("tool-started", "o:t:2"),
        ("tool-started", "o:t:3"),
        ("tool-settled", "o:t:2"),
        ("tool-settled", "o:t:3"),
        ("tool-settled", "o"),
    ]
    assert all(d["parent_call_id"] == "o" for _, d in log if d["call_id"] != "o")
    assert [d["top_level"] for t, d in log if t == "tool-settled"] == [False, False, False, True]
    assert annotated == ["o:t:1", "o:t:2", "o:t:3", "o"]
    # Only the outer call reaches the model surface.
    assert [m.get("tool_call_id") for m in model.requests[1].messages if m["role"] == "tool"] == ["o"]


@pytest.mark.asyncio
async def test_nested_calls_pass_the_same_guard(make_reference_host: Callable[..., ReferenceHost]) -> None:
    guarded: list[tuple[str, str | None]] = []

    class NoThirteen:
        @hookimpl
        def agent_host_guard(self, call: ToolCall, spec: ToolSpec, services: HostServices) -> Refusal | None:
            guarded.append((call.call_id, call.parent_call_id))
            return Refusal(code="unlucky", reason="13") if call.arguments.get("n") == 13 else None

    async def outer(arguments: Any, context: ToolContext) -> Any:
        results = [await context.services.dispatch(nested(context, n, "inner", {"n": n})) for n in (12, 13)]
        return [[r.status.value, r.dispatched, r.error and r.error.code] for r in results]

    tools = [tool("outer", outer), tool("inner", inner, schema=N_SCHEMA)]
    async with make_reference_host(tools=tools, plugins=[NoThirteen()]) as host:
        session = await host.start_session(session_id="s-1")
        top = await session.call_tool("inner", {"n": 13})
        result = await session.call_tool("outer", {})
        started = [d["call_id"] for _, d in events(session, "tool-started")]
    assert top.error is not None and top.error.code == "refused" and not top.dispatched
    assert result.value == [["ok", True, None], ["error", False, "refused"]]
    assert guarded == [
        ("direct-1@s-1", None),
        ("direct-2@s-1", None),
        ("direct-2@s-1:t:12", "direct-2@s-1"),
        ("direct-2@s-1:t:13", "direct-2@s-1"),
    ]
    assert started == ["direct-2@s-1", "direct-2@s-1:t:12"]  # refused calls never start


@pytest.mark.asyncio
async def test_nested_unknown_tool_and_invalid_arguments_are_refused_undispatched(
    make_reference_host: Callable[..., ReferenceHost],
) -> None:
    async def outer(arguments: Any, context: ToolContext) -> Any:
        return [
            await context.services.dispatch(nested(context, 1, "innr", {"n": 1})),
            await context.services.dispatch(nested(context, 2, "inner", {"n": "one"})),
            await context.services.dispatch(nested(context, 3, "inner", {"n": 1, "extra": True})),
        ]

    tools = [tool("outer", outer), tool("inner", inner, schema=N_SCHEMA)]
    async with make_reference_host(tools=tools) as host:
        session = await host.start_session(session_id="s-1")
        result = await session.call_tool("outer", {})
        started = [d["call_id"] for _, d in events(session, "tool-started")]
        settled = {d["call_id"]: d["result"] for _, d in events(session, "tool-settled")}
    unknown, wrong_type, extra = result.value
    assert isinstance(unknown, ToolResult) and unknown.error is not None
    assert (unknown.status, unknown.dispatched, unknown.error.code) == (ResultStatus.ERROR, False, "unknown-tool")
    assert "Did you mean: inner?" in unknown.error.message
    assert wrong_type.error.code == "invalid-arguments" and not wrong_type.dispatched
    assert "n: 'one' is not of type 'integer'" in wrong_type.error.message
    assert extra.error.code == "invalid-arguments" and "extra" in extra.error.message
    assert started == ["direct-1@s-1"]
    assert {k: v["dispatched"] for k, v in settled.items() if k != "direct-1@s-1"} == {
        "direct-1@s-1:t:1": False,
        "direct-1@s-1:t:2": False,
        "direct-1@s-1:t:3": False,
    }


@pytest.mark.asyncio
async def test_nested_call_after_the_outer_settled_is_abandoned(
    make_reference_host: Callable[..., ReferenceHost],
) -> None:
    late = asyncio.Event()
    ran: list[int] = []
    holder: dict[str, asyncio.Task[ToolResult]] = {}

    async def counted(arguments: Any, context: ToolContext) -> Any:
        ran.append(arguments["n"])
        return arguments["n"]

    async def outer(arguments: Any, context: ToolContext) -> Any:
        async def later() -> ToolResult:
            await late.wait()
            return await context.services.dispatch(nested(context, 1, "inner", {"n": 1}))

        holder["late"] = asyncio.create_task(later())
        return "outer done"

    tools = [tool("outer", outer), tool("inner", counted, schema=N_SCHEMA)]
    async with make_reference_host(tools=tools) as host:
        session = await host.start_session(session_id="s-1")
        assert (await session.call_tool("outer", {})).value == "outer done"
        late.set()
        result = await bounded(holder["late"])
        orphan = await host.services.dispatch(
            ToolCall(call_id="orphan", tool="inner", arguments={"n": 2}, caller=session.agent)
        )
        logged = events(session, "tool-started", "tool-settled", "tool-abandoned")
    assert ran == []
    assert result.status is ResultStatus.CANCELLED and not result.dispatched
    assert result.error is not None and result.error.code == "abandoned"
    assert orphan.error is not None and orphan.error.code == "abandoned"  # no parent call at all
    assert [(t, d["call_id"]) for t, d in logged] == [
        ("tool-started", "direct-1@s-1"),
        ("tool-settled", "direct-1@s-1"),
        ("tool-abandoned", "direct-1@s-1:t:1"),
        ("tool-abandoned", "orphan"),
    ]


@pytest.mark.asyncio
async def test_settling_outer_call_abandons_queued_nested_calls_and_drains_admitted_ones(
    make_reference_host: Callable[..., ReferenceHost],
) -> None:
    release = asyncio.Event()
    admitted = asyncio.Event()
    ran: list[int] = []
    tasks: dict[int, asyncio.Task[ToolResult]] = {}

    async def blocking(arguments: Any, context: ToolContext) -> Any:
        ran.append(arguments["n"])
        admitted.set()
        await release.wait()
        return arguments["n"]

    async def outer(arguments: Any, context: ToolContext) -> Any:
        for n in (1, 2):
            tasks[n] = asyncio.create_task(context.services.dispatch(nested(context, n, "block", {"n": n})))
        await admitted.wait()
        return "settling"  # without awaiting its nested calls

    tools = [tool("outer", outer), tool("block", blocking, schema=N_SCHEMA)]
    async with make_reference_host(tools=tools, max_parallel=1) as host:
        session = await host.start_session(session_id="s-1")
        call = asyncio.create_task(session.call_tool("outer", {}))
        await bounded(admitted.wait())  # both nested calls were submitted before the first body ran
        queued = await bounded(tasks[2])
        assert queued.error is not None and queued.error.code == "abandoned"
        await spin()
        assert not call.done()  # the admitted nested call is drained before the outer settles
        release.set()
        outer_result = await bounded(call)
        drained = await bounded(tasks[1])
        logged = [(t, d["call_id"]) for t, d in events(session, "tool-started", "tool-settled", "tool-abandoned")]
    assert outer_result.value == "settling" and drained.value == 1 and ran == [1]
    assert logged == [
        ("tool-started", "direct-1@s-1"),
        ("tool-started", "direct-1@s-1:t:1"),
        ("tool-abandoned", "direct-1@s-1:t:2"),
        ("tool-settled", "direct-1@s-1:t:1"),
        ("tool-settled", "direct-1@s-1"),
    ]


@pytest.mark.asyncio
async def test_tool_started_logs_a_detached_copy_of_the_arguments(
    make_reference_host: Callable[..., ReferenceHost],
) -> None:
    async def mutator(arguments: Any, context: ToolContext) -> Any:
        arguments["items"].append("added by the tool")
        arguments["new"] = True
        return len(arguments["items"])

    async def outer(arguments: Any, context: ToolContext) -> Any:
        mine = {"items": ["a"]}
        result = await context.services.dispatch(nested(context, 1, "mutator", mine))
        return [result.value, mine]

    original = {"items": ["a", "b"]}
    model = ScriptedModel(
        [
            AssistantTurn(
                tool_calls=(
                    RequestedCall(call_id="m", tool="mutator", arguments=original),
                    RequestedCall(call_id="o", tool="outer", arguments={}),
                )
            ),
            AssistantTurn(text="done"),
        ]
    )
    async with make_reference_host(tools=[tool("mutator", mutator), tool("outer", outer)]) as host:
        session = await host.start_session(model=model)
        await session.run_turn("go")
        started = {d["call_id"]: d["arguments"] for _, d in events(session, "tool-started")}
        assistant = next(d for t, d in events(session, "assistant-message") if d["tool_calls"])
    assert original == {"items": ["a", "b"]}  # the model's own object is never handed to the tool
    assert started == {"m": {"items": ["a", "b"]}, "o": {}, "o:t:1": {"items": ["a"]}}
    on_disk = {e["data"]["call_id"]: e["data"]["arguments"] for e in disk(session) if e["type"] == "tool-started"}
    assert on_disk == started
    # What the model is shown of its own call is what it asked for, not what the tool did to it.
    assert assistant["tool_calls"][0]["arguments"] == {"items": ["a", "b"]}
    assert model.requests[1].messages[1]["tool_calls"][0]["arguments"] == {"items": ["a", "b"]}
    outer_value = orjson.loads(model.requests[1].messages[-1]["content"])
    assert outer_value == [2, {"items": ["a", "added by the tool"], "new": True}]


@pytest.mark.asyncio
async def test_cancel_by_call_id_sets_the_signal_and_settles_cancelled(
    make_reference_host: Callable[..., ReferenceHost],
) -> None:
    started = asyncio.Event()
    seen: dict[str, bool] = {}

    async def sleeper(arguments: Any, context: ToolContext) -> Any:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            seen["cancelled-flag"] = context.cancelled.is_set()
            raise
        return "never"

    async with make_reference_host(tools=[tool("sleeper", sleeper)]) as host:
        session = await host.start_session(session_id="s-1")
        call = asyncio.create_task(session.call_tool("sleeper", {}))
        await bounded(started.wait())
        assert host.dispatcher.cancel("s-1", "direct-1@s-1") is True
        result = await bounded(call)
        assert host.dispatcher.cancel("s-1", "direct-1@s-1") is False  # no longer running
        assert host.dispatcher.cancel("s-1", "no-such-call") is False
        (settled,) = [d["result"] for _, d in events(session, "tool-settled")]
    assert seen == {"cancelled-flag": True}
    assert result.status is ResultStatus.CANCELLED and result.dispatched
    assert result.error is not None and result.error.code == "cancelled"
    assert settled["status"] == "cancelled"


@pytest.mark.asyncio
async def test_cancelling_an_outer_call_with_nested_calls_in_flight_settles_it(
    make_reference_host: Callable[..., ReferenceHost],
) -> None:
    slow_started = asyncio.Event()
    nested_saw_cancel: list[bool] = []

    async def slow(arguments: Any, context: ToolContext) -> Any:
        slow_started.set()
        try:
            await asyncio.Event().wait()
        finally:
            nested_saw_cancel.append(context.cancelled.is_set())

    async def fast(arguments: Any, context: ToolContext) -> Any:
        return "fast"

    async def outer(arguments: Any, context: ToolContext) -> Any:
        # "fast" finishes its body and waits to commit behind "slow".
        return await asyncio.gather(
            context.services.dispatch(nested(context, 1, "slow", {})),
            context.services.dispatch(nested(context, 2, "fast", {})),
        )

    tools = [tool("outer", outer), tool("slow", slow), tool("fast", fast)]
    async with make_reference_host(tools=tools) as host:
        session = await host.start_session(session_id="s-1")
        call = asyncio.create_task(session.call_tool("outer", {}))
        await bounded(slow_started.wait())
        await spin()
        assert host.dispatcher.cancel("s-1", "direct-1@s-1")
        result = await bounded(call)
        followup = await bounded(session.call_tool("fast", {}))
        events = session.log.events
    assert result.status is ResultStatus.CANCELLED
    assert nested_saw_cancel == [True]
    assert followup.value == "fast"
    # Every nested call that started also settled: none is left open in the log.
    started = {e.data["call_id"] for e in events if e.type == "tool-started" and e.data["parent_call_id"]}
    settled = {e.data["call_id"]: e.data["result"]["status"] for e in events if e.type == "tool-settled"}
    assert started == {"direct-1@s-1:t:1", "direct-1@s-1:t:2"}
    assert started <= settled.keys()
    assert settled["direct-1@s-1:t:1"] == "cancelled"


@pytest.mark.asyncio
async def test_nested_call_reresolves_against_the_current_view(
    make_reference_host: Callable[..., ReferenceHost],
) -> None:
    async def outer(arguments: Any, context: ToolContext) -> Any:
        first = await context.services.dispatch(nested(context, 1, "inner", {"n": 1}))
        host.remove_tool("inner")
        second = await context.services.dispatch(nested(context, 2, "inner", {"n": 2}))
        return [first.ok, second.error and second.error.code]

    async with make_reference_host(tools=[tool("outer", outer), tool("inner", inner, schema=N_SCHEMA)]) as host:
        session = await host.start_session(session_id="s-1")
        result = await session.call_tool("outer", {})
    assert result.value == [True, "unknown-tool"]


@pytest.mark.asyncio
async def test_a_model_call_to_a_tool_not_offered_to_it_is_refused(
    make_reference_host: Callable[..., ReferenceHost],
) -> None:
    ran: list[str] = []

    async def secret(arguments: Any, context: ToolContext) -> Any:
        ran.append(context.call.call_id)
        return "secret"

    async def front(arguments: Any, context: ToolContext) -> Any:
        result = await context.services.dispatch(nested(context, 1, "secret", {}))
        return result.value

    class OnlyFront:
        @hookimpl
        def agent_host_model_tools(self, context: PromptContext) -> list[str]:
            return ["front"]

    model = ScriptedModel(
        [
            AssistantTurn(
                tool_calls=(
                    RequestedCall(call_id="m1", tool="secret", arguments={}),
                    RequestedCall(call_id="m2", tool="front", arguments={}),
                )
            ),
            AssistantTurn(text="done"),
        ]
    )
    tools = [tool("secret", secret), tool("front", front)]
    async with make_reference_host(tools=tools, plugins=[OnlyFront()]) as host:
        session = await host.start_session(model=model)
        await session.run_turn("go")
        settled = {e.data["call_id"]: e.data["result"] for e in session.log.events if e.type == "tool-settled"}
    assert settled["m1"]["error"]["code"] == "unknown-tool" and settled["m1"]["dispatched"] is False
    assert settled["m2"]["value"] == "secret"  # still reachable through nested dispatch
    assert ran == ["m2:t:1"]


@pytest.mark.asyncio
async def test_cancelling_a_nested_dispatch_cancels_and_awaits_its_body_and_twice_abandons_it(
    make_reference_host: Callable[..., ReferenceHost],
) -> None:
    # HostServices.dispatch: cancelling it cancels the body (signal set, task cancelled) and awaits it;
    # cancelling it again stops the wait for a body that ignores its cancellation.
    body_started, release = asyncio.Event(), asyncio.Event()
    seen: list[bool] = []

    async def stubborn(arguments: Any, context: ToolContext) -> Any:
        body_started.set()
        while not release.is_set():
            try:
                await release.wait()
            except asyncio.CancelledError:
                seen.append(context.cancelled.is_set())  # ignored: keeps waiting
        return "late"

    outcome: dict[str, Any] = {}

    async def outer(arguments: Any, context: ToolContext) -> Any:
        inner = asyncio.ensure_future(context.services.dispatch(nested(context, 1, "stubborn", {})))
        await body_started.wait()
        inner.cancel()
        await spin()
        outcome["waiting"] = not inner.done()
        inner.cancel()
        await spin()
        outcome["gave-up"] = inner.cancelled()
        release.set()
        return "outer"

    async with make_reference_host(tools=[tool("outer", outer), tool("stubborn", stubborn)]) as host:
        session = await host.start_session(session_id="s-1")
        result = await bounded(session.call_tool("outer", {}))
        settled = {d["call_id"]: d["result"]["status"] for _, d in events(session, "tool-settled")}
    assert result.value == "outer"
    assert seen == [True]  # cancelled once; the second cancellation only stops the wait
    assert outcome == {"waiting": True, "gave-up": True}
    assert settled["direct-1@s-1:t:1"] == "cancelled"
