"""The demo tools against a program that races them (issue 8, items 4, 5 and 8).

A confined program shares the workspace with the host's tools. While a tool
runs, the program can swap a directory with a symlink leading out of the
workspace (``renameat2(RENAME_EXCHANGE)`` makes the swap atomic), replace
the notes directory with a symlink, or leave a FIFO where a file is
expected. Each test does that for real — a racing thread, real symlinks,
real FIFOs — and then checks that nothing outside the workspace was read or
written: bait files outside hold a known text that must never come back, and
a directory outside must stay empty.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import stat
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from hookspecs import AgentRef, ToolCall, ToolContext, ToolDefinition, ToolFailure
from hookspecs.reference import ReferenceHost
from hookspecs.reference.demo_tools import demo_tool_definitions
from hookspecs.reference.demo_tools.files import MAX_READ_BYTES
from tests.racing import exchange, swapping

BAIT = "BAIT-FROM-OUTSIDE-THE-WORKSPACE"
ROUNDS = 300
HANG_GUARD_S = 30.0  # only keeps a regression from hanging the suite; never a performance bound


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory outside the workspace that must stay empty."""
    path = tmp_path / "outside"
    path.mkdir()
    return path


@pytest.fixture
def bait(tmp_path: Path) -> Path:
    """A directory outside the workspace holding ``secret.txt`` with :data:`BAIT` (a stand-in for /etc/shadow)."""
    path = tmp_path / "bait"
    path.mkdir()
    (path / "secret.txt").write_text(f"{BAIT}\n")
    return path


@pytest_asyncio.fixture
async def host(make_reference_host: Callable[..., ReferenceHost], reference_workspace: Path) -> AsyncIterator[Any]:
    async with make_reference_host(tools=demo_tool_definitions(reference_workspace)) as built:
        yield built


def tools(host: ReferenceHost) -> dict[str, ToolDefinition]:
    return {definition.spec.name: definition for definition in demo_tool_definitions(host.workspace)}


async def call(host: ReferenceHost, definition: ToolDefinition, arguments: dict[str, Any]) -> Any:
    """Run a tool body directly (as the dispatcher does); an exception comes back as itself.

    A :class:`ToolFailure` is the expected refusal; any other exception is a
    crash, which :func:`no_crashes` rejects after the escape checks.
    """
    agent = AgentRef(session_id="s", agent_id="s", family_id="s")
    context = ToolContext(
        call=ToolCall(call_id="c", tool=definition.spec.name, arguments=arguments, caller=agent),
        services=host.services,
        cancelled=asyncio.Event(),
    )
    try:
        return await definition.handler(arguments, context)
    except Exception as error:
        return error


def no_crashes(values: list[Any]) -> None:
    crashes = [value for value in values if isinstance(value, Exception) and not isinstance(value, ToolFailure)]
    assert crashes == []


def outside_untouched(outside: Path, bait: Path) -> None:
    assert sorted(os.listdir(outside)) == []
    assert sorted(os.listdir(bait)) == ["secret.txt"]
    assert (bait / "secret.txt").read_text() == f"{BAIT}\n"


# --- item 5: check-then-use races ---------------------------------------------------------


@pytest.mark.asyncio
async def test_write_file_never_writes_through_a_swapped_directory(
    host: ReferenceHost, reference_workspace: Path, outside: Path, bait: Path
) -> None:
    (reference_workspace / "d").mkdir()
    (reference_workspace / "swap").symlink_to(outside)
    write_file = tools(host)["write_file"]
    seen: list[Any] = []
    with swapping(reference_workspace / "d", reference_workspace / "swap") as swaps:
        for number in range(ROUNDS):
            seen.append(await call(host, write_file, {"path": f"d/f{number}.txt", "content": "x"}))
    assert swaps[0] > 0
    outside_untouched(outside, bait)
    real = reference_workspace / "d" if not (reference_workspace / "d").is_symlink() else reference_workspace / "swap"
    assert sorted(os.listdir(real)) == sorted(f"f{n}.txt" for n, value in enumerate(seen) if isinstance(value, dict))
    no_crashes(seen)


@pytest.mark.asyncio
async def test_read_file_never_reads_through_a_swapped_directory(
    host: ReferenceHost, reference_workspace: Path, outside: Path, bait: Path
) -> None:
    (reference_workspace / "d").mkdir()
    (reference_workspace / "d" / "secret.txt").write_text("harmless\n")
    (reference_workspace / "swap").symlink_to(bait)
    read_file = tools(host)["read_file"]
    seen: list[Any] = []
    with swapping(reference_workspace / "d", reference_workspace / "swap") as swaps:
        for _ in range(3 * ROUNDS):  # reads are cheap: more chances for a regression to show
            result = await call(host, read_file, {"path": "d/secret.txt"})
            seen.append(result if isinstance(result, Exception) else result["lines"])
    assert swaps[0] > 0
    assert not any(BAIT in repr(value) for value in seen), "read_file returned a file from outside the workspace"
    outside_untouched(outside, bait)
    if (reference_workspace / "d").is_symlink():
        exchange(reference_workspace / "d", reference_workspace / "swap")
    assert (await call(host, read_file, {"path": "d/secret.txt"}))["lines"] == ["harmless"]
    no_crashes(seen)


@pytest.mark.asyncio
async def test_list_and_search_never_reach_through_a_swapped_directory(
    host: ReferenceHost, reference_workspace: Path, outside: Path, bait: Path
) -> None:
    (reference_workspace / "d").mkdir()
    (reference_workspace / "d" / "secret.txt").write_text("harmless\n")
    (reference_workspace / "swap").symlink_to(bait)
    by_name = tools(host)
    seen: list[Any] = []
    with swapping(reference_workspace / "d", reference_workspace / "swap") as swaps:
        for _ in range(ROUNDS // 3):
            seen.append(await call(host, by_name["search_files"], {"query": "bait"}))
            seen.append(await call(host, by_name["list_files"], {}))
    assert swaps[0] > 0
    for value in seen:
        assert BAIT not in repr(value)
        if isinstance(value, dict) and "entries" in value:
            # The bait's size (32 bytes) never shows up as the size of a workspace file.
            assert all(entry["bytes"] == len("harmless\n") for entry in value["entries"]), value
    outside_untouched(outside, bait)
    no_crashes(seen)


@pytest.mark.asyncio
async def test_read_file_refuses_a_file_swapped_with_a_symlink_to_a_secret(
    host: ReferenceHost, reference_workspace: Path, bait: Path, outside: Path
) -> None:
    (reference_workspace / "note.txt").write_text("harmless\n")
    (reference_workspace / "link").symlink_to(bait / "secret.txt")
    read_file = tools(host)["read_file"]
    seen: list[Any] = []
    with swapping(reference_workspace / "note.txt", reference_workspace / "link") as swaps:
        for _ in range(ROUNDS):
            seen.append(await call(host, read_file, {"path": "note.txt"}))
    assert swaps[0] > 0
    assert not any(BAIT in repr(value) for value in seen)
    outside_untouched(outside, bait)
    no_crashes(seen)


# --- item 4: the notes store ------------------------------------------------------------------


@pytest.mark.asyncio
async def test_notes_refuse_a_notes_directory_replaced_by_a_symlink(
    host: ReferenceHost, reference_workspace: Path, outside: Path, bait: Path
) -> None:
    (reference_workspace / ".demo").symlink_to(outside)
    by_name = tools(host)
    added = await call(host, by_name["notes_add"], {"title": "t", "body": "b"})
    assert isinstance(added, ToolFailure) and added.code == "symlink"
    searched = await call(host, by_name["notes_search"], {})
    assert isinstance(searched, ToolFailure) and searched.code == "symlink"
    outside_untouched(outside, bait)


@pytest.mark.asyncio
async def test_notes_never_write_through_a_swapped_notes_directory(
    host: ReferenceHost, reference_workspace: Path, outside: Path, bait: Path
) -> None:
    by_name = tools(host)
    first = await call(host, by_name["notes_add"], {"title": "first", "body": "b"})
    assert first == {"id": 1}
    (reference_workspace / "swap").symlink_to(outside)
    seen: list[Any] = []
    with swapping(reference_workspace / ".demo", reference_workspace / "swap") as swaps:
        for number in range(ROUNDS // 3):
            seen.append(await call(host, by_name["notes_add"], {"title": f"n{number}", "body": "b"}))
    assert swaps[0] > 0
    outside_untouched(outside, bait)
    no_crashes(seen)
    if (reference_workspace / ".demo").is_symlink():
        exchange(reference_workspace / ".demo", reference_workspace / "swap")
    # The store holds exactly the notes whose calls succeeded (how many did depends on the race).
    listed = await call(host, by_name["notes_search"], {"limit": 500})
    assert [note["title"] for note in listed["notes"]] == ["first"] + [
        f"n{n}" for n, value in enumerate(seen) if isinstance(value, dict)
    ]
    assert all(value.code == "symlink" for value in seen if isinstance(value, ToolFailure))


@pytest.mark.asyncio
async def test_notes_refuse_a_database_file_replaced_by_a_symlink(
    host: ReferenceHost, reference_workspace: Path, outside: Path, bait: Path
) -> None:
    (reference_workspace / ".demo").mkdir()
    (reference_workspace / ".demo" / "notes.sqlite").symlink_to(outside / "planted.sqlite")
    added = await call(host, tools(host)["notes_add"], {"title": "t", "body": "b"})
    assert isinstance(added, ToolFailure) and added.code == "symlink"
    outside_untouched(outside, bait)


# --- item 8: FIFOs and devices never stall the host --------------------------------------------


class FifoRescue:
    """Unblocks a reader stuck on ``fifo`` after :data:`HANG_GUARD_S` (so a regression fails, not hangs)."""

    def __init__(self, fifos: list[Path]) -> None:
        self.fifos = fifos
        self.done = threading.Event()
        self.rescued = False
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        if self.done.wait(HANG_GUARD_S):
            return
        self.rescued = True
        while not self.done.is_set():
            for fifo in self.fifos:
                with contextlib.suppress(OSError):  # no reader yet (ENXIO), or the path is gone
                    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # the blocked reader sees EOF
            self.done.wait(0.05)

    def __enter__(self) -> FifoRescue:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self._thread.join()


@pytest.mark.asyncio
async def test_search_files_skips_a_fifo_and_keeps_the_event_loop_running(
    host: ReferenceHost, reference_workspace: Path
) -> None:
    (reference_workspace / "a.txt").write_text("needle here\n")
    os.mkfifo(reference_workspace / "pipe.txt")
    os.mkfifo(reference_workspace / "zz.txt")
    by_name = tools(host)
    ticks = 0
    stop = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            await asyncio.sleep(0)

    with FifoRescue([reference_workspace / "pipe.txt", reference_workspace / "zz.txt"]) as rescue:
        ticking = asyncio.ensure_future(ticker())
        await asyncio.sleep(0)
        before = ticks
        found = await asyncio.wait_for(call(host, by_name["search_files"], {"query": "needle"}), HANG_GUARD_S)
        during = ticks - before
        listed = await asyncio.wait_for(call(host, by_name["list_files"], {}), HANG_GUARD_S)
        read = await asyncio.wait_for(call(host, by_name["read_file"], {"path": "pipe.txt"}), HANG_GUARD_S)
        stop.set()
        await ticking
    assert not rescue.rescued, "a tool blocked on a FIFO"
    assert found == {"matches": [{"path": "a.txt", "line": 1, "text": "needle here"}], "truncated": False}
    assert during > 0, "the event loop did not run another coroutine while search_files worked"
    assert listed == {"entries": [{"path": "a.txt", "bytes": 12}], "truncated": False}
    assert isinstance(read, ToolFailure) and read.code == "not-a-regular-file"


@pytest.mark.asyncio
async def test_a_file_swapped_with_a_fifo_never_blocks_read_or_search(
    host: ReferenceHost, reference_workspace: Path
) -> None:
    (reference_workspace / "f.txt").write_text("needle\n")
    os.mkfifo(reference_workspace / "pipe")
    by_name = tools(host)
    seen: list[Any] = []
    with (
        FifoRescue([reference_workspace / "f.txt", reference_workspace / "pipe"]) as rescue,
        swapping(reference_workspace / "f.txt", reference_workspace / "pipe") as swaps,
    ):
        for _ in range(ROUNDS // 3):
            seen.append(await asyncio.wait_for(call(host, by_name["read_file"], {"path": "f.txt"}), HANG_GUARD_S))
            seen.append(await asyncio.wait_for(call(host, by_name["search_files"], {"query": "x"}), HANG_GUARD_S))
    assert swaps[0] > 0
    assert not rescue.rescued, "a tool blocked on a FIFO"
    no_crashes(seen)
    reads = [value for value in seen if isinstance(value, dict) and "lines" in value]
    assert all(value["lines"] == ["needle"] for value in reads)
    assert all(value.code == "not-a-regular-file" for value in seen if isinstance(value, ToolFailure))


@pytest.mark.asyncio
@pytest.mark.skipif(os.geteuid() != 0, reason="creating a device node needs root")
async def test_device_nodes_are_refused(host: ReferenceHost, reference_workspace: Path) -> None:
    os.mknod(reference_workspace / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a character device
    by_name = tools(host)
    read = await asyncio.wait_for(call(host, by_name["read_file"], {"path": "null"}), HANG_GUARD_S)
    assert isinstance(read, ToolFailure) and read.code == "not-a-regular-file"
    found = await asyncio.wait_for(call(host, by_name["search_files"], {"query": "x"}), HANG_GUARD_S)
    assert found == {"matches": [], "truncated": False}


@pytest.mark.asyncio
async def test_a_huge_sparse_file_is_refused_not_loaded(host: ReferenceHost, reference_workspace: Path) -> None:
    # A sparse file costs the program nothing and the host its memory: read_file refuses, search_files skips it.
    with open(reference_workspace / "huge.txt", "wb") as handle:
        handle.write(b"needle\n")
        handle.truncate(MAX_READ_BYTES + 1)
    (reference_workspace / "small.txt").write_text("needle\n")
    by_name = tools(host)
    read = await call(host, by_name["read_file"], {"path": "huge.txt"})
    assert isinstance(read, ToolFailure) and read.code == "file-too-large"
    found = await call(host, by_name["search_files"], {"query": "needle"})
    assert found == {"matches": [{"path": "small.txt", "line": 1, "text": "needle"}], "truncated": False}


@pytest.mark.asyncio
async def test_a_planted_store_that_is_no_notes_database_fails_cleanly(
    host: ReferenceHost, reference_workspace: Path
) -> None:
    (reference_workspace / ".demo").mkdir()
    by_name = tools(host)
    (reference_workspace / ".demo" / "notes.sqlite").write_bytes(b"not a database" * 100)
    for name, arguments in (("notes_add", {"title": "t", "body": "b"}), ("notes_search", {})):
        result = await call(host, by_name[name], arguments)
        assert isinstance(result, ToolFailure) and result.code == "corrupt-store", result
    other = sqlite3.connect(reference_workspace / "other.sqlite")
    other.execute("CREATE TABLE notes (unrelated TEXT)")
    other.commit()
    other.close()
    (reference_workspace / "other.sqlite").replace(reference_workspace / ".demo" / "notes.sqlite")
    for name, arguments in (("notes_add", {"title": "t", "body": "b"}), ("notes_search", {})):
        result = await call(host, by_name[name], arguments)
        assert isinstance(result, ToolFailure) and result.code == "corrupt-store", result
