"""The per-call path's shortcuts keep the seams' semantics (issue 32 item 2, ADR 0123).

A nested call passes ``agent_host_guard`` and ``agent_host_tool_result``; with plain implementations only,
the façade runs pluggy's loop itself instead of entering pluggy's call chain. These tests check, on the real
reference host, that the shortcut is taken only then (counted at pluggy's own ``_hookexec``), that what it
returns is what pluggy's call would (a refusal, annotations), and that a wrapper (new or old style) or call
monitoring registered sends every call through pluggy again, so they see each one. Validators are compiled
once per view, from the schema's content.
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pluggy
import pytest

from hookspecs import ToolCall, ToolContext, ToolDefinition, ToolSpec, hookimpl
from hookspecs.reference import ReferenceHost, registry
from hookspecs.types import Refusal, ResultAnnotation, ResultStatus, ToolResult

NESTED = 6
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def _tools() -> list[ToolDefinition]:
    async def noop(arguments: Any, context: ToolContext) -> int:
        return int(arguments["n"])

    async def outer(arguments: Any, context: ToolContext) -> list[Any]:
        parent = context.call
        values = []
        for i in range(NESTED):
            call = ToolCall(
                call_id=f"{parent.call_id}:t:{i}",
                tool="noop",
                arguments={"n": i} if i != 3 else {"n": "three"},  # one invalid: refused by validation
                caller=parent.caller,
                parent_call_id=parent.call_id,
            )
            result = await context.services.dispatch(call)
            values.append(result.value if result.status is ResultStatus.OK else result.error.code)  # type: ignore[union-attr]
        return values

    return [
        ToolDefinition(spec=ToolSpec(name="noop", description="n", input_schema=SCHEMA), handler=noop),
        ToolDefinition(spec=ToolSpec(name="outer", description="o"), handler=outer),
    ]


class Seen:
    """Plain implementations: refuse ``n == 5``, annotate every result."""

    def __init__(self) -> None:
        self.guarded: list[str] = []

    @hookimpl
    def agent_host_guard(self, call: ToolCall, spec: ToolSpec, services: Any) -> Refusal | None:
        self.guarded.append(call.call_id)
        return Refusal(code="five", reason="no fives") if call.arguments.get("n") == 5 else None

    @hookimpl
    def agent_host_tool_result(self, call: ToolCall, result: ToolResult, services: Any) -> ResultAnnotation:
        return ResultAnnotation(metadata={"seen": call.call_id})


class NewWrapper:
    def __init__(self) -> None:
        self.calls: list[str] = []

    @hookimpl(wrapper=True)
    def agent_host_guard(self, call: ToolCall, spec: ToolSpec, services: Any) -> Generator[None, Any, Any]:
        self.calls.append(call.call_id)
        return (yield)

    @hookimpl(wrapper=True)
    def agent_host_tool_result(self, call: ToolCall, result: ToolResult, services: Any) -> Generator[None, Any, Any]:
        self.calls.append("result " + call.call_id)
        return (yield)


class OldWrapper:
    def __init__(self) -> None:
        self.calls: list[str] = []

    @hookimpl(hookwrapper=True)
    def agent_host_guard(self, call: ToolCall, spec: ToolSpec, services: Any) -> Generator[None, Any, None]:
        self.calls.append(call.call_id)
        yield


async def _run(tmp_path: Path, plugins: list[object], monitor: bool = False) -> tuple[Any, ReferenceHost, list[str]]:
    host = ReferenceHost(
        workspace=tmp_path, state_dir=tmp_path / "state", tools=_tools(), plugins=plugins, load_entry_points=False
    )
    entered: list[str] = []
    pm = host.facade.pm
    real = pm._hookexec

    def counted(name: str, *args: Any) -> Any:
        entered.append(name)
        return real(name, *args)

    pm._hookexec = counted  # type: ignore[method-assign]
    for caller in (pm.hook.agent_host_guard, pm.hook.agent_host_tool_result):
        caller._hookexec = counted  # type: ignore[attr-defined]
    monitored: list[str] = []
    if monitor:
        pm.add_hookcall_monitoring(lambda name, impls, kwargs: monitored.append(name), lambda *a: None)
    async with host:
        session = await host.start_session(user_id="u", title="t")
        result = await session.call_tool("outer", {})
        settled = [e.data for e in session.log.of_type("tool-settled") if e.data.get("parent_call_id")]
    per_call = [n for n in entered if n in ("agent_host_guard", "agent_host_tool_result")]
    return (
        (result, settled, per_call + [f"monitored {n}" for n in monitored if n == "agent_host_guard"]),
        host,
        per_call,
    )


GUARDED = NESTED  # the outer call and the nested ones but the invalid one (refused before the guard)
SETTLED = NESTED + 1  # every call, the outer one and the refused ones included, passes the result seam
VALUES = [0, 1, 2, "invalid-arguments", 4, "refused"]


@pytest.mark.asyncio
async def test_plain_implementations_skip_pluggys_chain_with_the_same_outcome(tmp_path: Path) -> None:
    seen = Seen()
    (result, settled, _), _, entered = await _run(tmp_path, [seen])
    assert result.value == VALUES
    assert len(seen.guarded) == GUARDED
    ok = [s for s in settled if s["result"]["status"] == "ok"]
    assert len(ok) == 4 and all(s["result"]["metadata"] == {"seen": s["call_id"]} for s in ok)
    assert entered == []  # pluggy's chain was never entered for these seams


@pytest.mark.asyncio
@pytest.mark.parametrize("wrapper", [NewWrapper, OldWrapper])
async def test_a_wrapper_sees_every_call(tmp_path: Path, wrapper: type[NewWrapper] | type[OldWrapper]) -> None:
    seen, wrapping = Seen(), wrapper()
    (result, settled, _), _, entered = await _run(tmp_path, [seen, wrapping])
    assert result.value == VALUES
    assert [c for c in wrapping.calls if not c.startswith("result ")] == seen.guarded
    assert entered.count("agent_host_guard") == GUARDED
    if wrapper is NewWrapper:
        assert len([c for c in wrapping.calls if c.startswith("result ")]) == SETTLED
        assert entered.count("agent_host_tool_result") == SETTLED
    ok = [s for s in settled if s["result"]["status"] == "ok"]
    assert len(ok) == 4 and all(s["result"]["metadata"] == {"seen": s["call_id"]} for s in ok)


@pytest.mark.asyncio
async def test_call_monitoring_sees_every_call(tmp_path: Path) -> None:
    seen = Seen()
    (result, _, trace), _, _ = await _run(tmp_path, [seen], monitor=True)
    assert result.value == VALUES
    assert trace.count("monitored agent_host_guard") == len(seen.guarded) == GUARDED


def test_a_view_compiles_each_schema_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Validation through a view serialises no schema per call; equal schemas share one validator."""
    keys: list[bytes] = []
    real = registry._schema_key

    def counting(schema: Any) -> bytes:
        keys.append(real(schema))
        return keys[-1]

    monkeypatch.setattr(registry, "_schema_key", counting)
    view = registry.ToolView(_tools())
    assert len(keys) == 2
    validator = view.validator("noop")
    spec = view.get("noop").spec  # type: ignore[union-attr]
    for n in range(50):
        assert registry.validation_errors(spec, {"n": n}, validator) == []
    assert registry.validation_errors(spec, {"n": "x"}, validator) == registry.validation_errors(spec, {"n": "x"})
    assert len(keys) == 3  # the one call without the view's validator
    again = registry.ToolView(_tools())
    assert again.validator("noop") is validator  # keyed by content: a rebuilt view reuses the compiled one


def test_the_probe_is_pluggys_default_hookexec() -> None:
    from hookspecs.reference.facade import _PLAIN_HOOKEXEC

    assert pluggy.PluginManager("another")._inner_hookexec is _PLAIN_HOOKEXEC


@pytest.mark.asyncio
async def test_a_wrapper_registered_later_sees_the_calls_after_it(tmp_path: Path) -> None:
    """The façade's plan of a hook follows registrations: a wrapper added mid-session sees the next calls."""
    seen, wrapping = Seen(), NewWrapper()
    host = ReferenceHost(
        workspace=tmp_path, state_dir=tmp_path / "state", tools=_tools(), plugins=[seen], load_entry_points=False
    )
    async with host:
        session = await host.start_session(user_id="u", title="t")
        first = await session.call_tool("outer", {})
        host.facade.pm.register(wrapping, name="late-wrapper")
        second = await session.call_tool("outer", {})
    assert first.value == second.value == VALUES
    assert [c for c in wrapping.calls if not c.startswith("result ")] == seen.guarded[GUARDED:]
    assert len([c for c in wrapping.calls if c.startswith("result ")]) == SETTLED
