"""Previews at the model display boundary, end to end through the reference host (ADR 0069).

A host tool returns about 5 MB; a program returns it from ``run_code``. The
model sees a preview within the budget and a handle; ``read_spill`` (native)
and ``spill.read`` (in a program) read the rest by offset without running the
tool again, and the parts reassemble byte for byte. A failed spill keeps the
whole display and says so; a host without a spill store gets no preview.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from hookspecs import PRESENTATION_TRUNCATED, SPILL_HANDLE, JSONObject, JSONValue, ToolContext, ToolDefinition, tool
from hookspecs.reference import AssistantTurn, ReferenceHost, RequestedCall, Session
from hookspecs.reference.demo_tools import demo_tool_definitions
from hookspecs.reference.model import ModelRequest
from ptc_plus.capabilities import choose_counter
from ptc_plus.config import ContextSection
from ptc_plus.preview import MAX_READ_CHARS, METADATA_KEY, READ_TOOL_NAME

from .conftest import HostFactory, write_config

pytestmark = pytest.mark.usefixtures("unconfined")

BUDGET = ContextSection().preview_tokens
HANDLE = re.compile(r"spill-[0-9a-f]{32}")


def big_text(size: int) -> str:
    """About ``size`` characters of varied lines, some of them not ASCII (byte-identical reassembly is at stake)."""
    lines, total, i = [], 0, 0
    while total < size:
        line = f"row {i:07d} value {i * 7919 % 100003} {'é中🙂' if i % 97 == 0 else 'plain'}\n"
        lines.append(line)
        total += len(line)
        i += 1
    return "".join(lines)


class Counted:
    """A host tool returning a fixed large text; counts how often its body ran."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.runs = 0

    def definition(self) -> ToolDefinition:
        @tool("big_report", description="Return the full report.", input_schema={"type": "object", "properties": {}})
        async def big_report(arguments: JSONObject, context: ToolContext) -> JSONValue:
            self.runs += 1
            return self.text

        return big_report


Step = Callable[[ModelRequest], AssistantTurn]


class StepModel:
    """A model whose every answer is computed from the request it gets (it can read what it saw)."""

    route = "scripted"

    def __init__(self, steps: list[Step]) -> None:
        self.steps = steps
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> AssistantTurn:
        self.requests.append(request)
        return self.steps[len(self.requests) - 1](request)


def run_code(code: str) -> Step:
    return lambda request: AssistantTurn(
        tool_calls=(RequestedCall(tool="run_code", arguments={"description": "t", "code": code}),)
    )


def last_tool_message(request: ModelRequest) -> str:
    return str([m for m in request.messages if m["role"] == "tool"][-1]["content"])


def read_natively(request: ModelRequest) -> AssistantTurn:
    """The model reads on from where the preview's head ends, as the notice tells it to."""
    seen = last_tool_message(request)
    handle = HANDLE.search(seen)
    offset = re.search(r"offset=(\d+)", seen)
    assert handle is not None and offset is not None, seen[-2000:]
    arguments = {"handle": handle.group(0), "offset": int(offset.group(1)), "limit": 500}
    return AssistantTurn(tool_calls=(RequestedCall(tool=READ_TOOL_NAME, arguments=arguments),))


READ_ALL = """
import hashlib
handle = {handle!r}
parts, offset = [], 0
while True:
    chunk = await spill.read(handle, offset, 30000)
    if not chunk:
        break
    parts.append(chunk)
    offset += len(chunk)
whole = "".join(parts)
return {{"chars": len(whole), "sha256": hashlib.sha256(whole.encode("utf-8")).hexdigest()}}
"""


def read_in_program(request: ModelRequest) -> AssistantTurn:
    handle = HANDLE.search("\n".join(str(m["content"]) for m in request.messages if m["role"] == "tool"))
    assert handle is not None
    return run_code(READ_ALL.format(handle=handle.group(0)))(request)


def settled(session: Session, tool_name: str) -> list[dict[str, Any]]:
    """Results of ``tool_name`` the model saw (top-level calls), in commit order."""
    return [
        e.data["result"]
        for e in session.log.events
        if e.type == "tool-settled" and e.data["top_level"] and e.data["result"]["tool"] == tool_name
    ]


async def big_session(
    open_host: HostFactory, workspace: Path, text: str, **host_kwargs: Any
) -> tuple[ReferenceHost, Session, Counted, StepModel]:
    write_config(workspace, budget=100_000)
    counted = Counted(text)
    model = StepModel(
        [
            run_code("return await tools.big_report()"),
            read_natively,
            read_in_program,
            lambda r: AssistantTurn(text="done"),
        ]
    )
    host = await open_host(tools=[*demo_tool_definitions(workspace), counted.definition()], **host_kwargs)
    session = await host.start_session(title="t", model=model)
    return host, session, counted, model


async def read_everything(session: Session, handle: str) -> str:
    """Every part of ``handle`` through the host's full pipeline (guard, validation, execute seam)."""
    parts, offset = [], 0
    while offset is not None:
        result = await session.call_tool(READ_TOOL_NAME, {"handle": handle, "offset": offset, "limit": MAX_READ_CHARS})
        assert result.ok, result.error
        assert isinstance(result.value, dict)
        parts.append(str(result.value["text"]))
        offset = result.value["next_offset"]
    return "".join(parts)


@pytest.mark.asyncio
async def test_a_5mb_result_becomes_a_preview_readable_in_full_without_rerunning(
    open_host: HostFactory, workspace: Path
) -> None:
    text = big_text(5_000_000)
    _host, session, counted, model = await big_session(open_host, workspace, text)
    await session.run_turn("summarise the report")

    result = settled(session, "run_code")[0]
    assert result["status"] == "ok" and result["value"]["value"] == text  # the canonical value is whole
    full = orjson.dumps(result["value"], option=orjson.OPT_SORT_KEYS).decode()
    preview = result["presentation"]
    counter = choose_counter(None)
    assert counter.count(preview) <= BUDGET < counter.count(full[: BUDGET * 8])
    facts = result["metadata"][METADATA_KEY]
    handle = facts["handle"]
    assert result["metadata"][SPILL_HANDLE] == handle and result["metadata"][PRESENTATION_TRUNCATED] is True
    assert facts["chars"] == len(full) and facts["tokens"] <= BUDGET
    assert preview.startswith(full[: facts["head"]]) and preview.endswith(full[len(full) - facts["tail"] :])
    # What the model was sent is the preview, and it was offered the read tool next to run_code.
    assert last_tool_message(model.requests[1]) == preview
    assert {"run_code", READ_TOOL_NAME} <= {t.name for t in model.requests[1].tools}

    # The model's own read continues exactly where the head ended.
    (native,) = settled(session, READ_TOOL_NAME)
    assert native["value"]["text"] == full[facts["head"] : facts["head"] + 500]
    assert native["value"]["next_offset"] == facts["head"] + 500

    # A program reads it all with spill.read: same characters, same bytes.
    program = settled(session, "run_code")
    assert len(program) == 2 and program[1]["status"] == "ok", program[1].get("error")
    assert program[1]["value"]["value"] == {
        "chars": len(full),
        "sha256": hashlib.sha256(full.encode("utf-8")).hexdigest(),
    }

    reassembled = await read_everything(session, handle)
    assert reassembled.encode("utf-8") == full.encode("utf-8")
    assert counted.runs == 1  # every read came from the spill store; the tool never ran again


@pytest.mark.asyncio
async def test_a_failed_spill_keeps_the_whole_display_and_says_so(open_host: HostFactory, workspace: Path) -> None:
    text = big_text(200_000)
    host, session, counted, model = await big_session(open_host, workspace, text)
    assert host.spill is not None

    def refuse(_text: str) -> str:
        raise OSError(28, "No space left on device")

    host.spill.put = refuse  # type: ignore[method-assign,assignment]
    model.steps[1:] = [lambda r: AssistantTurn(text="done")]
    await session.run_turn("summarise the report")

    (result,) = settled(session, "run_code")
    full = orjson.dumps(result["value"], option=orjson.OPT_SORT_KEYS).decode()
    assert result["status"] == "ok" and result["value"]["value"] == text  # never a success turned into a failure
    assert result["presentation"].startswith(full)  # nothing lost
    note = result["presentation"][len(full) :]
    assert note.count("\n") == 1 and "No space left on device" in note and str(BUDGET) in note
    facts = result["metadata"][METADATA_KEY]
    assert facts["unmet"] == "spill-failed" and "handle" not in facts
    assert PRESENTATION_TRUNCATED not in result["metadata"] and SPILL_HANDLE not in result["metadata"]
    assert counted.runs == 1


@pytest.mark.asyncio
async def test_without_a_spill_store_there_is_no_preview_and_no_read_tool(
    open_host: HostFactory, workspace: Path
) -> None:
    text = big_text(200_000)
    _host, session, _counted, model = await big_session(open_host, workspace, text, spill_max_bytes=None)
    model.steps[1:] = [
        run_code("try:\n    await spill.read('spill-0', 0, 10)\nexcept ToolCallError as e:\n    return e.code"),
        lambda r: AssistantTurn(text="done"),
    ]
    await session.run_turn("summarise the report")

    first, second = settled(session, "run_code")
    assert first["presentation"] is None and METADATA_KEY not in first["metadata"]
    assert READ_TOOL_NAME not in {t.name for t in model.requests[0].tools}
    assert second["value"]["value"] == "PTC-6103"  # spill.read says why, without a protocol violation


@pytest.mark.asyncio
async def test_a_result_the_host_already_truncated_is_not_wrapped_again(
    open_host: HostFactory, workspace: Path
) -> None:
    import ptc_plus.plugin
    from hookspecs import ResultStatus, ToolCall, ToolResult

    _host, session, _counted, _model = await big_session(open_host, workspace, "")
    ctl = ptc_plus.plugin.controller(_host.services)
    call = ToolCall(call_id="c1", tool="run_code", arguments={}, caller=session.agent)
    shown = big_text(200_000) + "\n[host: output truncated; 1 MB more in /tmp/host-kept.txt]"
    truncated = ToolResult(
        call_id="c1",
        tool="run_code",
        status=ResultStatus.OK,
        value=None,
        presentation=shown,
        metadata={PRESENTATION_TRUNCATED: True},
    )
    assert ctl.tool_result(call, truncated) is None
    # The same result without the host's mark is previewed: the mark alone made the difference.
    annotation = ctl.tool_result(
        call, ToolResult(call_id="c1", tool="run_code", status=ResultStatus.OK, presentation=shown)
    )
    assert annotation is not None and annotation.metadata[PRESENTATION_TRUNCATED] is True
    # Nested results never reach the model directly: never previewed.
    nested = ToolCall(call_id="c1:ptc:1", tool="big_report", arguments={}, caller=session.agent, parent_call_id="c1")
    assert (
        ctl.tool_result(
            nested, ToolResult(call_id="c1:ptc:1", tool="big_report", status=ResultStatus.OK, presentation=shown)
        )
        is None
    )


@pytest.mark.asyncio
async def test_a_small_result_is_left_alone(open_host: HostFactory, workspace: Path) -> None:
    _host, session, _counted, model = await big_session(open_host, workspace, "short")
    model.steps[1:] = [lambda r: AssistantTurn(text="done")]
    await session.run_turn("go")
    (result,) = settled(session, "run_code")
    assert result["presentation"] is None and result["metadata"] == {}


@pytest.mark.asyncio
async def test_the_read_tool_is_no_capability_of_the_plan(open_host: HostFactory, workspace: Path) -> None:
    host, session, _counted, _model = await big_session(open_host, workspace, "short")
    from .conftest import plan_of

    assert READ_TOOL_NAME in host.view(session.agent).names()
    assert all(e.name != READ_TOOL_NAME for e in plan_of(host, session).entries)
    await host.aclose()
    resumed_host = await open_host()
    resumed = await resumed_host.resume_session(session.agent.session_id)
    assert all(e.name != READ_TOOL_NAME for e in plan_of(resumed_host, resumed).entries)
