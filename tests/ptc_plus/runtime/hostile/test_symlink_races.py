"""Symlinks and races against the host's file tools (issue 8 items 4 and 5).

The program swaps a workspace directory with a symlink leading out of the
workspace (``renameat2(RENAME_EXCHANGE)`` in a thread, as fast as it can;
under gVisor, which refuses that flag, three renames per swap, ADR 0127)
while calling the host's demo tools over and over. ``read_file`` must never
return a host file (``/etc/shadow`` or the bait secret), ``write_file`` and
``notes_add`` must never write outside (the guard checks the bait tree and
marker-named files in the host's ``/tmp``). Each racing program reports how
many swaps it made, so a race that never ran fails the test instead of
passing it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .conftest import NR, Hostile, needs_syscall_numbers

pytestmark = [pytest.mark.needs_bwrap, needs_syscall_numbers]

ROUNDS = 600

SWAPPER = f"""
import threading
def start_swapping(first, second):
    stop = threading.Event()
    state = {{'swaps': 0, 'error': None}}
    def run():
        exchange = True
        while not stop.is_set():
            if exchange:
                number = ctypes.c_long({NR.get("renameat2", 0)})
                if libc.syscall(number, -100, first.encode(), -100, second.encode(), 2) == 0:
                    state['swaps'] += 1
                    continue
                if ctypes.get_errno() != errno.EINVAL or state['swaps']:
                    state['error'] = errname(ctypes.get_errno())
                    return
                exchange = False  # gVisor has no RENAME_EXCHANGE: swap by three renames, as fast
            try:
                os.rename(first, first + '.swap')
                os.rename(second, first)
                os.rename(first + '.swap', second)
            except OSError as error:
                state['error'] = errname(error.errno)
                return
            state['swaps'] += 1
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    def finish():
        stop.set()
        thread.join()
        return state
    return finish
def outcome(call):
    async def run():
        try:
            return await call()
        except ToolCallError as error:
            return 'refused: ' + error.code
    return run
"""


def shadow_lines() -> set[str]:
    try:
        return {line for line in Path("/etc/shadow").read_text().splitlines() if line.strip()}
    except OSError:
        return set()


@pytest.mark.asyncio
@pytest.mark.parametrize("target", ["/etc", "OUTSIDE"])
async def test_read_file_never_returns_a_host_file(hostile: Hostile, target: str) -> None:
    name = "shadow" if target == "/etc" else "secret.txt"
    link_target = "'/etc'" if target == "/etc" else "OUTSIDE"
    code = (
        SWAPPER
        + f"""
os.mkdir('d')
open('d/{name}', 'w').write('decoy\\n')
os.symlink({link_target}, 's')
seen = {{}}
finish = start_swapping('d', 's')
try:
    for _ in range({ROUNDS}):
        reply = await outcome(lambda: tools.read_file(path='d/{name}'))()
        key = reply if isinstance(reply, str) else '\\n'.join(reply['lines'])
        seen[key] = seen.get(key, 0) + 1
finally:
    state = finish()
return {{'state': state, 'seen': seen}}
"""
    )
    result = (await hostile.run(code, timeout=60)).ok()
    assert result["state"]["error"] is None and result["state"]["swaps"] > 0, result["state"]
    leaked = {key for key in result["seen"] if key != "decoy" and not key.startswith("refused: ")}
    assert leaked == set(), f"read_file returned a host file's content: {sorted(leaked)[:3]}"
    secrets = shadow_lines() | {(hostile.outside / "secret.txt").read_text().strip()}
    assert not any(line in key for key in result["seen"] for line in secrets)


@pytest.mark.asyncio
@pytest.mark.parametrize("target", ["/", "OUTSIDE"])
async def test_write_file_never_writes_outside(hostile: Hostile, target: str) -> None:
    # With "/", d/tmp/<marker>-n lands in the host's /tmp when the swap wins; the guard looks for marker files there.
    link_target, folder = ("'/'", "d/tmp") if target == "/" else ("OUTSIDE", "d")
    code = (
        SWAPPER
        + f"""
os.makedirs('{folder}')
os.symlink({link_target}, 's')
written = refused = 0
finish = start_swapping('d', 's')
try:
    for number in range({ROUNDS}):
        reply = await outcome(lambda: tools.write_file(path=f'{folder}/{{MARKER}}-{{number}}.txt', content='escaped'))()
        if isinstance(reply, str):
            refused += 1
        else:
            written += 1
finally:
    state = finish()
return {{'state': state, 'written': written, 'refused': refused}}
"""
    )
    result = (await hostile.run(code, timeout=60)).ok()
    assert result["state"]["error"] is None and result["state"]["swaps"] > 0, result["state"]
    assert result["written"] + result["refused"] == ROUNDS


@pytest.mark.asyncio
async def test_listing_and_search_never_reach_outside(hostile: Hostile) -> None:
    code = (
        SWAPPER
        + f"""
os.mkdir('d')
open('d/decoy.txt', 'w').write('decoy root: line\\n')
os.symlink('/etc', 's')
replies = []
finish = start_swapping('d', 's')
try:
    for _ in range({ROUNDS // 3}):
        replies.append(await outcome(lambda: tools.search_files(query='root:'))())
        replies.append(await outcome(lambda: tools.list_files(path='d'))())
finally:
    state = finish()
return {{'state': state, 'replies': replies}}
"""
    )
    result = (await hostile.run(code, timeout=60)).ok()
    assert result["state"]["error"] is None and result["state"]["swaps"] > 0, result["state"]
    for reply in result["replies"]:
        if isinstance(reply, str):
            assert reply.startswith("refused: "), reply
        elif "matches" in reply:
            assert all(match["text"] == "decoy root: line" for match in reply["matches"]), reply
        else:
            assert {entry["path"] for entry in reply["entries"]} <= {"d/decoy.txt", "s/decoy.txt"}, reply


@pytest.mark.asyncio
async def test_notes_never_follow_a_swapped_store_directory(hostile: Hostile) -> None:
    code = (
        SWAPPER
        + f"""
await tools.notes_add(title='first', body='creates .demo')
os.symlink(OUTSIDE, 's')
added = refused = 0
finish = start_swapping('.demo', 's')
try:
    for number in range({ROUNDS // 3}):
        reply = await outcome(lambda: tools.notes_add(title=MARKER, body='escaped'))()
        if isinstance(reply, str):
            refused += 1
        else:
            added += 1
finally:
    state = finish()
return {{'state': state, 'added': added, 'refused': refused}}
"""
    )
    result = (await hostile.run(code, timeout=60)).ok()
    state = result["state"]
    protected = state["error"] in ("EBUSY", "EROFS", "EPERM") and state["swaps"] == 0  # .demo cannot be moved
    raced = state["error"] is None and state["swaps"] > 0
    assert protected or raced, state


@pytest.mark.asyncio
async def test_notes_never_follow_a_planted_store_symlink(hostile: Hostile) -> None:
    # Issue 8 item 4: .demo replaced by a symlink to a directory outside; the host created notes.sqlite there.
    code = """
import shutil
removed = attempt(shutil.rmtree, '.demo') if os.path.exists('.demo') else 'absent'
planted = attempt(os.symlink, OUTSIDE, '.demo')
try:
    await tools.notes_add(title='x', body='y')
    added = 'added'
except ToolCallError as error:
    added = 'refused: ' + error.code
return [planted, added]
"""
    planted, added = (await hostile.run(code)).ok()
    assert planted != "allowed" or added.startswith("refused: "), (planted, added)
    assert sorted(os.listdir(hostile.outside)) == ["inner", "secret.txt"]


@pytest.mark.asyncio
async def test_static_symlinks_and_paths_out_of_the_workspace_are_refused(hostile: Hostile) -> None:
    code = """
os.symlink('/etc/shadow', 'shadow-link')
os.symlink(OUTSIDE + '/secret.txt', 'secret-link')
os.symlink(OUTSIDE, 'outside-dir')
os.symlink('/dev/zero', 'zero-link')
calls = {
    'shadow_link': lambda: tools.read_file(path='shadow-link'),
    'secret_link': lambda: tools.read_file(path='secret-link'),
    'through_dir': lambda: tools.read_file(path='outside-dir/secret.txt'),
    'zero_link': lambda: tools.read_file(path='zero-link'),
    'dotdot': lambda: tools.read_file(path='../outside/secret.txt'),
    'absolute': lambda: tools.read_file(path='/etc/shadow'),
    'write_dotdot': lambda: tools.write_file(path='../outside/planted.txt', content='x'),
    'write_through_dir': lambda: tools.write_file(path='outside-dir/planted.txt', content='x'),
    'write_absolute': lambda: tools.write_file(path=OUTSIDE + '/planted.txt', content='x'),
    'list_dotdot': lambda: tools.list_files(path='..'),
    'list_through_dir': lambda: tools.list_files(path='outside-dir'),
}
results = {}
for name, call in calls.items():
    try:
        results[name] = ['answered', await call()]
    except ToolCallError as error:
        results[name] = 'refused: ' + error.code
return results
"""
    results = (await hostile.run(code)).ok()
    answered = {name: value for name, value in results.items() if not str(value).startswith("refused: ")}
    assert answered == {}, answered


@pytest.mark.asyncio
async def test_a_fifo_or_device_in_the_workspace_is_refused_by_read_file(hostile: Hostile) -> None:
    code = """
os.mkfifo('pipe')
try:
    await tools.read_file(path='pipe')
    return 'answered'
except ToolCallError as error:
    return 'refused: ' + error.code
"""
    outcome = await hostile.run(code, timeout=20)
    assert outcome.ok().startswith("refused: ")
    assert os.path.exists(hostile.workspace / "pipe")
