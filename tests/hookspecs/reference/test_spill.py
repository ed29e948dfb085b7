"""The reference host's spill store: exact reads by offset, a bound with eviction, pins and the sweep (ADR 0069)."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest

from hookspecs import SPILL_HANDLE, ResultAnnotation, ToolCall, ToolResult, hookimpl
from hookspecs.reference import AssistantTurn, ReferenceHost, RequestedCall, ScriptedModel
from hookspecs.reference.spill import FileSpillStore
from hookspecs.services import HostServices, SpillStore


def test_text_reads_back_exactly_by_character_offsets(tmp_path: Path) -> None:
    store = FileSpillStore(tmp_path / "spill")
    text = "héllo 中文 🙂 " * 1000
    handle = store.put(text)
    assert isinstance(store, SpillStore)
    assert store.put(text) == handle  # content-addressed: idempotent
    parts = [store.read(handle, offset, 333) for offset in range(0, len(text), 333)]
    assert "".join(parts).encode() == text.encode()
    assert store.read(handle, len(text) + 5, 10) == "" and store.read(handle) == text


@pytest.mark.parametrize("damage", ["missing", "garbage", "stale"])
def test_a_spill_without_a_usable_index_reads_the_same_and_gets_one(tmp_path: Path, damage: str) -> None:
    # Spills written before indexes (ADR 0087) have none; a damaged or stale one is not trusted.
    store = FileSpillStore(tmp_path / "spill")
    text = "héllo 中文 🙂 " * 20_000  # several index blocks
    handle = store.put(text)
    index = tmp_path / "spill" / f"{handle}.idx"
    written = index.read_bytes()
    if damage == "missing":
        index.unlink()
    elif damage == "garbage":
        index.write_bytes(b"{not json")
    else:
        index.write_bytes(written.replace(b'"bytes":', b'"bytes":1'))
    for offset in (0, 16_383, 16_384, 50_001, len(text) - 3):
        assert store.read(handle, offset, 1000) == text[offset : offset + 1000]
    assert index.read_bytes() == written  # rebuilt by streaming the file: the index put would have written


def test_the_sweep_and_eviction_take_the_index_along(tmp_path: Path) -> None:
    store = FileSpillStore(tmp_path / "spill")
    handle = store.put("x" * 100)
    assert store.sweep() == [handle]
    assert sorted(p.name for p in (tmp_path / "spill").iterdir()) == []


@pytest.mark.parametrize("handle", ["spill-nothere0000000000000000000000", "../etc/passwd", "spill-" + "0" * 32])
def test_unknown_or_malformed_handles_are_key_errors(tmp_path: Path, handle: str) -> None:
    with pytest.raises(KeyError):
        FileSpillStore(tmp_path / "spill").read(handle)


def test_text_larger_than_the_bound_is_refused_whole(tmp_path: Path) -> None:
    store = FileSpillStore(tmp_path / "spill", max_bytes=100)
    with pytest.raises(OSError) as raised:
        store.put("x" * 101)
    assert raised.value.errno == errno.EFBIG
    assert store.size() == 0


def _age(store: FileSpillStore, handle: str, seconds: float) -> None:
    path = store.root / f"{handle}.txt"
    stat = path.stat()
    os.utime(path, (stat.st_atime - seconds, stat.st_mtime - seconds))


def test_the_bound_evicts_the_least_recently_used_unpinned_first(tmp_path: Path) -> None:
    store = FileSpillStore(tmp_path / "spill", max_bytes=250)
    a, b = store.put("a" * 100), store.put("b" * 100)
    _age(store, a, 300)
    _age(store, b, 200)
    store.pin("s1", [a])  # a is oldest but a session shows it
    c = store.put("c" * 100)
    assert store.size() <= 250
    assert store.read(a) and store.read(c)
    with pytest.raises(KeyError):
        store.read(b)


def test_a_read_counts_as_use(tmp_path: Path) -> None:
    store = FileSpillStore(tmp_path / "spill", max_bytes=250)
    a, b = store.put("a" * 100), store.put("b" * 100)
    _age(store, a, 300)
    _age(store, b, 200)
    store.read(a)  # now the most recently used
    store.put("c" * 100)
    assert store.read(a)
    with pytest.raises(KeyError):
        store.read(b)


def test_the_sweep_deletes_only_what_this_store_wrote_and_nobody_pins(tmp_path: Path) -> None:
    root = tmp_path / "spill"
    other = FileSpillStore(root).put("another process wrote this")
    store = FileSpillStore(root)
    kept, dropped = store.put("shown"), store.put("compacted away")
    store.pin("s1", [kept])
    assert store.sweep() == [dropped]
    assert store.read(kept) == "shown" and store.read(other)
    with pytest.raises(KeyError):
        store.read(dropped)


def test_an_unreadable_pins_file_stops_the_sweep(tmp_path: Path) -> None:
    store = FileSpillStore(tmp_path / "spill")
    handle = store.put("anything")
    store.pin("s1", ["x"])
    next((tmp_path / "spill" / "pins").glob("*.json")).write_text("{not json", encoding="utf-8")
    assert store.sweep() == []
    assert store.read(handle) == "anything"


class Spiller:
    """A plugin that spills every top-level result and names the handle (contract 1.3)."""

    def __init__(self) -> None:
        self.handles: list[str] = []

    @hookimpl
    def agent_host_tool_result(self, call: ToolCall, result: ToolResult, services: HostServices) -> ResultAnnotation:
        if call.parent_call_id is not None or services.spill_store is None:
            return ResultAnnotation()
        handle = services.spill_store.put(f"full text of {call.call_id}")
        self.handles.append(handle)
        return ResultAnnotation(metadata={SPILL_HANDLE: handle}, presentation=f"preview; rest in {handle}")


def _echo_turn(text: str) -> list[AssistantTurn]:
    call = RequestedCall(tool="echo", arguments={"text": text})
    return [AssistantTurn(tool_calls=(call,)), AssistantTurn(text="ok")]


async def _host(tmp_path: Path, plugin: Spiller, **kwargs: Any) -> ReferenceHost:
    from hookspecs.reference.demo_tools import demo_tool_definitions

    (tmp_path / "ws").mkdir(exist_ok=True)
    return ReferenceHost(
        workspace=tmp_path / "ws",
        state_dir=tmp_path / "state",
        tools=demo_tool_definitions(tmp_path / "ws"),
        plugins=[plugin],
        load_entry_points=False,
        **kwargs,
    )


@pytest.mark.asyncio
async def test_spills_live_while_the_surface_shows_them_and_a_resume_reads_them(tmp_path: Path) -> None:
    plugin = Spiller()
    host = await _host(tmp_path, plugin)
    session = await host.start_session(model=ScriptedModel([*_echo_turn("one"), *_echo_turn("two")]))
    await session.run_turn("first")
    first = plugin.handles[-1]
    session.compact()  # the latest turn's call stays: so does its spill
    await session.run_turn("second")
    second = plugin.handles[-1]
    session.compact()  # now only the second turn's call is kept
    assert session.spill_handles() == {second}
    sid = session.agent.session_id
    await host.aclose()  # the sweep drops the first spill, no longer shown anywhere

    again = await _host(tmp_path, Spiller())
    try:
        resumed = await again.resume_session(sid)
        assert resumed.spill_handles() == {second}
        assert again.services.spill_store is not None
        assert again.services.spill_store.read(second).startswith("full text of")
        with pytest.raises(KeyError):
            again.services.spill_store.read(first)
    finally:
        await again.aclose()


@pytest.mark.asyncio
async def test_a_host_may_have_no_spill_store(tmp_path: Path) -> None:
    host = await _host(tmp_path, Spiller(), spill_max_bytes=None)
    try:
        assert host.services.spill_store is None and host.spill is None
        session = await host.start_session(model=ScriptedModel(_echo_turn("x")))
        await session.run_turn("go")  # the plugin degrades; the host runs on
    finally:
        await host.aclose()
