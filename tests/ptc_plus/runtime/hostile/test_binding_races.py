"""A program races the host's reading of a REPL binding (issue 25 #3, ADR 0086).

The user file binds ``<workspace>/helper.py`` (or, as the red team had it,
the workspace file binds ``../helper.py``). The program, inside the sandbox,
swaps ``helper.py`` with a symlink to a host bait file
(``renameat2(RENAME_EXCHANGE)`` in a thread, as fast as it can) while the host
opens sessions: each opening loads the config and the bindings exactly as a
session start does (:func:`load_config`, :func:`load_bindings`). The host must
never read the bait and never fail: every opening either loads the real helper
or refuses the symlink (a workspace file's binding is refused unread). The
verdict counts openings, never time: the host starts once the program says its
swapper runs and the program stops swapping only after the host has finished,
so every opening raced; a race that never swapped fails.
"""

from __future__ import annotations

import asyncio
import collections
import threading
from pathlib import Path

import pytest

from ptc_plus.config import load_bindings, load_config

from .conftest import Hostile, needs_syscall_numbers
from .test_symlink_races import SWAPPER

pytestmark = [pytest.mark.needs_bwrap, needs_syscall_numbers]

OPENINGS = 3000
SAFE = "SAFE = 1\n"


@pytest.mark.asyncio
@pytest.mark.parametrize(("listed_in", "refusal"), [("user", "binding-symlink"), ("workspace", "binding-workspace")])
async def test_opening_sessions_never_reads_a_host_file_swapped_in_for_a_binding(
    hostile: Hostile, listed_in: str, refusal: str
) -> None:
    bait = hostile.outside / "bait.py"
    bait.write_text(f"BAIT = {hostile.marker!r}\n")
    user_file = hostile.scope / "user" / "config.toml"
    user_file.parent.mkdir()
    if listed_in == "user":
        user_file.write_text(f'[repl]\nbindings = ["{hostile.workspace / "helper.py"}"]\n')
    else:  # written before the run: the program could write it too, the guard would not mind
        (hostile.workspace / ".ptc-plus").mkdir()
        (hostile.workspace / ".ptc-plus" / "config.toml").write_text('[repl]\nbindings = ["../helper.py"]\n')
    started, done = hostile.workspace / "swapping", hostile.workspace / "done"
    code = (
        SWAPPER
        + f"""
open('helper.py', 'w').write({SAFE!r})
os.symlink({str(bait)!r}, 'link.py')
finish = start_swapping('helper.py', 'link.py')
open('swapping', 'w').close()
try:
    while not os.path.exists('done'):
        await asyncio.sleep(0.01)
finally:
    state = finish()
return state
"""
    )
    program_ended = threading.Event()

    def open_sessions() -> collections.Counter[str]:
        seen: collections.Counter[str] = collections.Counter()
        while not started.exists():  # the program's own signal, not a delay
            if program_ended.is_set():
                return seen
            program_ended.wait(0.01)
        try:
            for _ in range(OPENINGS):
                try:
                    bindings = load_bindings(load_config(hostile.workspace, user_file=user_file, env={}))
                except Exception as error:  # counted, not raised: the verdict says how often each thing happened
                    seen[f"crash: {type(error).__name__}"] += 1
                    continue
                sources = [source for _, source in bindings.modules]
                if any(hostile.marker in source for source in sources):
                    seen["bait"] += 1
                elif sources == [SAFE]:
                    seen["helper"] += 1
                else:
                    seen[",".join(issue.reason for issue in bindings.issues) or "nothing"] += 1
        finally:
            done.touch()
        return seen

    run = asyncio.ensure_future(hostile.run("import asyncio\n" + code, timeout=600))
    run.add_done_callback(lambda _: program_ended.set())
    seen = await asyncio.to_thread(open_sessions)
    state = (await run).ok()
    assert state["error"] is None and state["swaps"] > 0, state
    assert sum(seen.values()) == OPENINGS, seen
    assert seen["bait"] == 0, f"the host read the bait in {seen['bait']} of {OPENINGS} openings: {dict(seen)}"
    allowed = {"helper", refusal} if listed_in == "user" else {refusal}
    if hostile.executor == "gvisor":  # three renames per swap (no RENAME_EXCHANGE): between them the file is missing
        allowed.add("binding-missing")
    assert set(seen) <= allowed, dict(seen)
    print(f"openings: {dict(seen)}; swaps: {state['swaps']}")


def test_the_bait_is_refused_when_the_symlink_is_already_there(tmp_path: Path) -> None:
    workspace, user_file = tmp_path / "ws", tmp_path / "user.toml"
    workspace.mkdir()
    bait = tmp_path / "bait.py"
    bait.write_text("BAIT = 1\n")
    (workspace / "helper.py").symlink_to(bait)
    user_file.write_text(f'[repl]\nbindings = ["{workspace / "helper.py"}"]\n')
    bindings = load_bindings(load_config(workspace, user_file=user_file, env={}))
    assert bindings.modules == ()
    assert [issue.reason for issue in bindings.issues] == ["binding-symlink"]
