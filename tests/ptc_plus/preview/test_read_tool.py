"""``read_spill``: bounded reads by offset, typed failures (PTC-61xx), and the program's ``spill`` name."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from hookspecs import AgentRef, ToolCall, ToolContext, ToolFailure
from ptc_plus.preview import DEFAULT_READ_CHARS, MAX_READ_CHARS, READ_TOOL_NAME, read_spill_definition
from ptc_plus.runtime.worker import spill as worker_spill

from .test_seam import MemoryStore


class Services:
    def __init__(self, store: Any) -> None:
        self.spill_store = store


def context(store: Any) -> ToolContext:
    call = ToolCall(
        call_id="c", tool=READ_TOOL_NAME, arguments={}, caller=AgentRef(session_id="s", agent_id="s", family_id="s")
    )
    return ToolContext(call=call, services=Services(store), cancelled=asyncio.Event())  # type: ignore[arg-type]


async def read(store: Any, **arguments: Any) -> Any:
    return await read_spill_definition().handler(arguments, context(store))


@pytest.mark.asyncio
async def test_reads_continue_by_next_offset_until_the_end() -> None:
    store = MemoryStore()
    text = "ab🙂" * 10_000
    handle = store.put(text)
    first = await read(store, handle=handle)
    assert first == {
        "handle": handle,
        "offset": 0,
        "text": text[:DEFAULT_READ_CHARS],
        "next_offset": DEFAULT_READ_CHARS,
    }
    last = await read(store, handle=handle, offset=len(text) - 5, limit=100)
    assert last["text"] == text[-5:] and last["next_offset"] is None
    exact = await read(store, handle=handle, offset=len(text) - 10, limit=10)
    assert exact["next_offset"] is None  # nothing follows: no empty extra read needed


@pytest.mark.parametrize(
    ("store", "arguments", "code"),
    [
        (MemoryStore(), {"handle": "spill-unknown"}, "PTC-6101"),
        (MemoryStore(), {"handle": "spill-x", "limit": MAX_READ_CHARS + 1}, "PTC-6102"),
        (None, {"handle": "spill-x"}, "PTC-6103"),
    ],
    ids=["unknown", "too-large", "no-store"],
)
@pytest.mark.asyncio
async def test_typed_failures(store: Any, arguments: dict[str, Any], code: str) -> None:
    with pytest.raises(ToolFailure) as raised:
        await read(store, **arguments)
    assert raised.value.code == code


@pytest.mark.asyncio
async def test_an_unreadable_store_is_its_own_failure() -> None:
    class Broken(MemoryStore):
        def read(self, handle: str, offset: int = 0, limit: int | None = None) -> str:
            raise OSError(5, "Input/output error")

    with pytest.raises(ToolFailure) as raised:
        await read(Broken(), handle="spill-x")
    assert raised.value.code == "PTC-6104" and "Input/output error" in raised.value.message


def test_the_program_names_the_same_read_tool() -> None:
    # The worker imports the standard library only, so it spells the name itself.
    assert worker_spill.READ_TOOL == READ_TOOL_NAME
    assert worker_spill.UNAVAILABLE == "PTC-6103"


@pytest.mark.asyncio
async def test_the_program_spill_object_is_a_nested_read_and_read_only() -> None:
    sent: list[tuple[str, dict[str, Any]]] = []

    async def invoke(name: str, args: dict[str, Any]) -> Any:
        sent.append((name, args))
        return {"text": "abc", "next_offset": None}

    spill = worker_spill.build_spill(invoke, True)
    assert await spill.read("spill-1", 5) == "abc"
    assert await spill.read("spill-1", 5, 10) == "abc"
    assert sent == [
        (READ_TOOL_NAME, {"handle": "spill-1", "offset": 5}),
        (READ_TOOL_NAME, {"handle": "spill-1", "offset": 5, "limit": 10}),
    ]
    with pytest.raises(AttributeError):
        spill.read = None
    with pytest.raises(AttributeError):
        spill.write  # noqa: B018
    assert dir(spill) == ["read"]
