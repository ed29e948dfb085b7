"""Fixtures for the runtime tests: a runtime factory, a workspace and a small fake host.

:class:`FakeServices` implements :class:`~hookspecs.HostServices` just enough
for unit tests of the namespace and lossless values (dispatch runs the tool
body directly). Nested-call *semantics* are tested through the reference
host in ``test_nested.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest_asyncio

from hookspecs import (
    AgentRef,
    JSONObject,
    ResultStatus,
    SessionRecord,
    ToolCall,
    ToolContext,
    ToolDefinition,
    ToolError,
    ToolFailure,
    ToolResult,
    ToolSpec,
)
from ptc_plus.config import WORKSPACE_DIR
from ptc_plus.runtime.code_runtime import CodeRuntime
from ptc_plus.runtime.run_limits import RunLimits

AGENT = AgentRef(session_id="s1", agent_id="a1", family_id="s1")

Body = Callable[[JSONObject, ToolContext], Awaitable[Any]]


class FakeServices:
    """A minimal host: a fixed tool list, direct dispatch, records kept in memory."""

    def __init__(
        self, workspace: Path, tools: Sequence[ToolDefinition] = (), protected_paths: Sequence[Path] = ()
    ) -> None:
        self._workspace = workspace
        self._protected_paths = tuple(protected_paths)
        self.tools = {definition.spec.name: definition for definition in tools}
        self.dispatched: list[ToolCall] = []
        self.records: list[SessionRecord] = []

    @property
    def workspace(self) -> Path:
        return self._workspace

    @property
    def user_id(self) -> str:
        return "u"

    @property
    def protected_paths(self) -> Sequence[Path]:
        return self._protected_paths

    @property
    def token_counter(self) -> None:
        return None

    @property
    def spill_store(self) -> None:
        return None

    def tool_view(self, agent: AgentRef) -> Sequence[ToolSpec]:
        return [definition.spec for definition in self.tools.values()]

    async def dispatch(self, call: ToolCall) -> ToolResult:
        self.dispatched.append(call)
        definition = self.tools.get(call.tool)
        if definition is None:
            error = ToolError(code="unknown-tool", message=call.tool)
            return ToolResult(
                call_id=call.call_id, tool=call.tool, status=ResultStatus.ERROR, error=error, dispatched=False
            )
        context = ToolContext(call=call, services=self, cancelled=asyncio.Event())
        try:
            value = await definition.handler(call.arguments, context)
        except ToolFailure as failure:
            error = ToolError(code=failure.code, message=failure.message, data=failure.data)
            return ToolResult(call_id=call.call_id, tool=call.tool, status=ResultStatus.ERROR, error=error)
        return ToolResult(call_id=call.call_id, tool=call.tool, status=ResultStatus.OK, value=value)

    def append_record(self, agent: AgentRef, record: SessionRecord) -> None:
        self.records.append(record)

    def read_records(self, agent: AgentRef, kind: str | None = None) -> Sequence[SessionRecord]:
        return [record for record in self.records if kind is None or record.kind == kind]


def tool(name: str, body: Body, **spec: Any) -> ToolDefinition:
    spec.setdefault("description", f"test tool {name}")
    return ToolDefinition(spec=ToolSpec(name=name, **spec), handler=body)


def outer_context(services: FakeServices, call_id: str = "c1") -> ToolContext:
    call = ToolCall(call_id=call_id, tool="run_code", arguments={}, caller=AGENT)
    return ToolContext(call=call, services=services, cancelled=asyncio.Event())


RuntimeFactory = Callable[..., CodeRuntime]


@pytest_asyncio.fixture
async def make_runtime() -> AsyncIterator[RuntimeFactory]:
    """Build runtimes (no warm spare unless asked; ``danger-full-access`` unless asked); all closed at the end.

    Each protects the plugin's ``.ptc-plus`` in its workspaces, as the session's runtime does.
    """
    made: list[CodeRuntime] = []

    def factory(**overrides: Any) -> CodeRuntime:
        options: dict[str, Any] = {"warm_spare": False, "policy": "danger-full-access", **overrides}
        runtime = CodeRuntime(RunLimits(**options), owner_paths=(WORKSPACE_DIR,))
        made.append(runtime)
        return runtime

    yield factory
    for runtime in made:
        await runtime.aclose()


def limits_with(**overrides: Any) -> RunLimits:
    return attrs.evolve(RunLimits(warm_spare=False, policy="danger-full-access"), **overrides)


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (zombies count as dead)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")
