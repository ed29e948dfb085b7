"""Many real processes writing one store, a writer holding the lock without writing, and writers killed with
SIGKILL at random moments (ADR 0066, ADR 0091)."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ptc_plus.statistics import Evidence, FamilySample, StatisticsStore, workspace_store
from ptc_plus.statistics.codec import family_key
from ptc_plus.statistics.errors import StatisticsStoreUnwritable

ROOT = Path(__file__).resolve().parents[3]
REV = "sha256:aaaaaaaaaaaaaaaa"

WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from ptc_plus.statistics import Evidence, FamilySample, workspace_store

    workspace, worker, families = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    store = workspace_store(workspace, retention=100_000)  # the default wait bound, as hosts run it
    if len(sys.argv) > 4:
        store.lock_wait_s = float(sys.argv[4])
    sys.stdin.readline()  # start together
    for n in range(families):
        items = [Evidence(identity="host:a", revision="{rev}", disclosure="full", used=n % 2 == 0)]
        if n % 3 == 0:
            items.append(Evidence(identity="host:b", revision="{rev}", disclosure="on-demand", used=n % 6 == 0))
        items.append(Evidence(identity=f"host:own{{worker}}", revision="{rev}", disclosure="full", used=True))
        store.record(FamilySample(family_id=f"w{{worker}}-f{{n}}", workspace=str(workspace),
                                  plan_config_revision="c", evidence=items))
    """
).format(rev=REV)


def run_writers(workspace: Path, processes: int, families: int, wait: str | None = None) -> None:
    """``processes`` real writers of ``families`` families each, started together; ``wait``: their lock wait bound
    in seconds (default: the store's own)."""
    children = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(workspace), str(worker), str(families), *([wait] if wait else [])],
            stdin=subprocess.PIPE,
            cwd=ROOT,
        )
        for worker in range(processes)
    ]
    for child in children:
        assert child.stdin is not None
        child.stdin.write(b"go\n")
        child.stdin.close()
    for child in children:
        assert child.wait(timeout=600) == 0


def check_exact_counts(workspace: Path, processes: int, families: int) -> None:
    view = workspace_store(workspace, retention=100_000).read()
    total = processes * families
    assert view.status == "ok"
    assert view.families() == total
    assert view.retained_families() == total
    assert [f.sequence for f in view.payload.families] == list(range(1, total + 1))
    a = view.stats("host:a", REV, window=total, min_samples=1)
    assert (a.available, a.used) == (total, processes * len(range(0, families, 2)))
    b = view.stats("host:b", REV, window=total, min_samples=1)
    assert (b.available, b.used) == (processes * len(range(0, families, 3)), processes * len(range(0, families, 6)))
    for worker in range(processes):
        own = view.stats(f"host:own{worker}", REV, window=total, min_samples=1)
        assert (own.available, own.used) == (families, families)


def intake(workspace: Path) -> list[str]:
    """The intake's files, published or still being written (``.part``)."""
    return sorted(p.name for p in (workspace / ".ptc-plus").iterdir() if ".pending-" in p.name)


def check_folded(workspace: Path, processes: int, families: int) -> None:
    """Exact counts as read (the intake applied), then once more after a writer folded what still waited:
    samples left in the intake are there only if a wait ran out, and the next writer folds them."""
    check_exact_counts(workspace, processes, families)
    store = workspace_store(workspace, retention=100_000)
    store.record(FamilySample(family_id="fold", workspace=str(workspace), plan_config_revision="c", evidence=()))
    check_exact_counts(workspace, processes, families)  # a family with no evidence is not stored: only the fold
    leftovers = [p.name for p in (workspace / ".ptc-plus").iterdir() if p.name != "statistics.json"]
    assert leftovers == []


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    run_writers(tmp_path, processes=4, families=50)
    check_folded(tmp_path, processes=4, families=50)


def test_writers_that_never_wait_lose_nothing(tmp_path: Path) -> None:
    # The harshest bound: no wait at all. A writer that finds the lock busy leaves its sample in the intake and
    # returns; the next writer holding the lock folds it (the old store gave up on those families, PTC-5004).
    run_writers(tmp_path, processes=4, families=50, wait="0")
    check_folded(tmp_path, processes=4, families=50)


@pytest.mark.slow
def test_eight_processes_times_five_hundred_families_lose_nothing(tmp_path: Path) -> None:
    run_writers(tmp_path, processes=8, families=500)
    check_folded(tmp_path, processes=8, families=500)


@pytest.mark.slow
def test_thirty_two_processes_times_one_hundred_families_lose_nothing(tmp_path: Path) -> None:
    run_writers(tmp_path, processes=32, families=100)
    check_folded(tmp_path, processes=32, families=100)


HOLD = (
    "import fcntl, os, sys; d = os.open(sys.argv[1], os.O_RDONLY); fcntl.flock(d, fcntl.LOCK_EX); "
    "print('locked', flush=True); sys.stdin.readline()"
)


@contextlib.contextmanager
def lock_held(directory: Path, *, stopped: bool = False) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the writers' lock (and, with ``stopped``, stopped by SIGSTOP while holding it)."""
    directory.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(directory)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        if stopped:
            holder.send_signal(signal.SIGSTOP)
        yield holder
    finally:
        holder.kill()
        holder.wait()
        assert holder.stdout is not None and holder.stdin is not None
        holder.stdout.close()
        holder.stdin.close()


def test_all_samples_recorded_while_another_process_holds_the_lock_count_and_are_folded(tmp_path: Path) -> None:
    # Four writers with no wait record 50 families each while another process holds the lock throughout: every
    # sample goes to the intake, every reader counts it, and the first writer after the lock is free folds all.
    with lock_held(tmp_path / ".ptc-plus"):
        run_writers(tmp_path, processes=4, families=50, wait="0")
        assert len(intake(tmp_path)) == 200
        assert not (tmp_path / ".ptc-plus" / "statistics.json").exists()
        check_exact_counts(tmp_path, processes=4, families=50)  # read from the intake alone
    check_folded(tmp_path, processes=4, families=50)


def sample(family: str) -> FamilySample:
    return FamilySample(
        family_id=family,
        workspace="/ws",
        plan_config_revision="c",
        evidence=(Evidence(identity="host:a", revision=REV, disclosure="full", used=True),),
    )


STUCK_IN_FSYNC = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from ptc_plus.statistics import Evidence, FamilySample, workspace_store

    real_fsync = os.fsync
    def fsync(fd):
        real_fsync(fd)
        print("in-fsync", flush=True)  # the new store is in its temporary file, not yet renamed; the lock is held
        time.sleep(600)
    os.fsync = fsync
    workspace_store(Path(sys.argv[1])).record(FamilySample(
        family_id="killed", workspace=sys.argv[1], plan_config_revision="c",
        evidence=[Evidence(identity="host:a", revision="{rev}", disclosure="full", used=False)]))
    """
).format(rev=REV)


def test_a_writer_killed_mid_write_leaves_a_readable_store(tmp_path: Path) -> None:
    store = workspace_store(tmp_path)
    store.record(sample("before"))
    before = store.path.read_bytes()
    child = subprocess.Popen(
        [sys.executable, "-c", STUCK_IN_FSYNC, str(tmp_path)], stdout=subprocess.PIPE, cwd=ROOT, text=True
    )
    assert child.stdout is not None
    assert child.stdout.readline() == "in-fsync\n"
    temporary = [p for p in (tmp_path / ".ptc-plus").iterdir() if p.name.endswith(".tmp")]
    assert len(temporary) == 1  # killed with the new store written beside the old one
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    child.stdout.close()

    assert store.path.read_bytes() == before
    assert store.read().status == "ok"
    store.record(sample("after"))  # the dead writer's lock is gone with it; its temporary file is swept
    view = store.read()
    assert view.families() == 2
    assert view.stats("host:a", REV, window=5, min_samples=1).used == 2
    assert not temporary[0].exists()


LOOP = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from ptc_plus.statistics import Evidence, FamilySample, workspace_store
    from ptc_plus.statistics.errors import StatisticsStoreUnwritable

    store = workspace_store(Path(sys.argv[1]), retention=100_000)
    store.lock_wait_s = float(sys.argv[3])
    items = [Evidence(identity=f"mcp:s/tool_{{n}}", revision="{rev}", disclosure="full", used=n % 2 == 0)
             for n in range(300)]
    n = 0
    while True:
        family = f"{{sys.argv[2]}}-{{n}}"
        n += 1
        try:
            store.record(FamilySample(family_id=family, workspace=sys.argv[1], plan_config_revision="c",
                                      evidence=items))
        except StatisticsStoreUnwritable as refused:
            # A full intake behind a holder busy longer than this writer waits (at once, for the one with no
            # wait) is refused loudly: not recorded, so not printed. Any other failure ends the writer.
            if "samples already wait" not in refused.message("en"):
                raise
            continue
        print(family, flush=True)  # recorded: record() returned
    """
).format(rev=REV)


def test_writers_killed_at_random_moments_lose_nothing_they_recorded(tmp_path: Path) -> None:
    # Two writers contend (one with no wait, so it also dies while its sample waits in the intake) and are killed
    # with SIGKILL at random moments: every family whose record() returned is in the store, and nothing else
    # but the at most one family each writer had in flight.
    store = workspace_store(tmp_path, retention=100_000)
    rng = random.Random(91)
    recorded: set[str] = set()
    for round_ in range(6):
        children = [
            subprocess.Popen(
                [sys.executable, "-c", LOOP, str(tmp_path), f"r{round_}w{worker}", wait],
                stdout=subprocess.PIPE,
                cwd=ROOT,
                text=True,
            )
            for worker, wait in enumerate(["10", "0"])
        ]
        for child in children:
            assert child.stdout is not None
            first = child.stdout.readline().strip()
            assert first, f"writer {child.args[3]} ended before it recorded anything"  # not a family named ""
            recorded.add(first)  # each has recorded one family; the kill comes later
        time.sleep(rng.uniform(0.0, 0.3))  # a random kill point, not a margin: any point must be safe
        for child in children:
            os.kill(child.pid, signal.SIGKILL)
        for child in children:
            assert child.wait(timeout=30) == -signal.SIGKILL  # ended by the kill, never by a failure of its own
            assert child.stdout is not None
            recorded.update(line.strip() for line in child.stdout)  # what it printed before it died
            child.stdout.close()
        view = store.read()
        assert view.status == "ok", view.problem
        kept = {family.key for family in view.payload.families}
        assert {family_key(family) for family in recorded} <= kept  # nothing recorded is lost
        assert len(recorded) <= view.families() <= len(recorded) + 2 * (round_ + 1)  # at most the ones in flight
        assert view.retained_families() == view.families()
    store.record(sample("last"))
    assert store.read().status == "ok"
    assert sorted(p.name for p in (tmp_path / ".ptc-plus").iterdir()) == ["statistics.json"]


def test_a_writer_stopped_holding_the_lock_delays_a_recording_boundedly_and_loses_nothing(tmp_path: Path) -> None:
    # Another process takes the writers' lock and is stopped (SIGSTOP) while holding it: the recording returns
    # after its wait with the sample in the intake (counted by readers), and the next writer folds it.
    workspace = tmp_path / "ws"
    store = StatisticsStore(workspace / ".ptc-plus" / "statistics.json", root=workspace, lock_wait_s=0.3)
    with lock_held(workspace / ".ptc-plus", stopped=True):
        store.record(sample("stuck"))
        assert len(intake(workspace)) == 1
        view = store.read()
        assert view.status == "ok" and view.families() == 1
        assert view.stats("host:a", REV, window=5, min_samples=1).used == 1
    store.record(sample("next"))
    assert intake(workspace) == []
    view = store.read()
    assert [family.sequence for family in view.payload.families] == [1, 2]
    assert view.stats("host:a", REV, window=5, min_samples=1).used == 2


def test_a_full_intake_behind_a_stopped_writer_is_refused_loudly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("ptc_plus.statistics.store.MAX_PENDING", 3)
    workspace = tmp_path / "ws"
    store = StatisticsStore(workspace / ".ptc-plus" / "statistics.json", root=workspace, lock_wait_s=0.0)
    with lock_held(workspace / ".ptc-plus", stopped=True):
        for n in range(3):
            store.record(sample(f"f{n}"))
        with pytest.raises(StatisticsStoreUnwritable) as refused:
            store.record(sample("f3"))
        assert refused.value.code == "PTC-5004" and "3 samples already wait" in refused.value.message("en")
        assert store.read().families() == 3  # the bound: nothing else was added
    store.record(sample("f3"))
    assert store.read().families() == 4 and intake(workspace) == []


def test_a_full_intake_behind_a_live_writer_waits_for_it_instead_of_refusing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A holder that folds a large intake slowly fills it too (the random-kill test's writer with no wait did, and
    # the other writer, refused, died before its first line: read as a lost family ""). A writer that may wait
    # finds the intake full and the lock busy; the holder then lets go: the writer takes the lock and folds all.
    monkeypatch.setattr("ptc_plus.statistics.store.MAX_PENDING", 3)
    workspace = tmp_path / "ws"
    impatient = StatisticsStore(workspace / ".ptc-plus" / "statistics.json", root=workspace, lock_wait_s=0.0)
    store = StatisticsStore(workspace / ".ptc-plus" / "statistics.json", root=workspace, lock_wait_s=600.0)
    with lock_held(workspace / ".ptc-plus") as holder:
        for n in range(3):
            impatient.record(sample(f"f{n}"))
        assert len(intake(workspace)) == 3
        try_lock = StatisticsStore._try_lock

        def busy_once(directory: int) -> bool:
            # The kill point, in order: the writer's first try finds the lock busy (intake full), then the holder
            # ends. A writer that refuses at once never tries again.
            if try_lock(directory):
                return True
            if holder.poll() is None:
                assert holder.stdin is not None
                holder.stdin.write("done\n")
                holder.stdin.flush()
                holder.wait(timeout=60)
            return False

        monkeypatch.setattr(store, "_try_lock", busy_once)
        store.record(sample("f3"))
    assert intake(workspace) == []
    view = store.read()
    assert [family.sequence for family in view.payload.families] == [1, 2, 3, 4]
    assert view.stats("host:a", REV, window=5, min_samples=1).used == 4


KILLED_AFTER_REPLACE = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from ptc_plus.statistics import Evidence, FamilySample, workspace_store

    real_unlink = os.unlink
    def unlink(name, *args, **kwargs):
        if ".pending-" in str(name):
            print("replaced", flush=True)  # the store holding the intake is in place; no intake file removed yet
            time.sleep(600)
        return real_unlink(name, *args, **kwargs)
    os.unlink = unlink
    workspace_store(Path(sys.argv[1])).record(FamilySample(
        family_id="folding", workspace=sys.argv[1], plan_config_revision="c",
        evidence=[Evidence(identity="host:a", revision="{rev}", disclosure="full", used=True)]))
    """
).format(rev=REV)


def test_a_writer_killed_between_the_replace_and_the_intake_removal_loses_and_repeats_nothing(tmp_path: Path) -> None:
    # The fold's one window where a sample is in two places: the new store holds the intake, whose files are not
    # removed yet. A real SIGKILL there: readers count each family once, and the next fold applies the intake
    # again as the upsert it is (same sequence numbers, nothing new), then removes it.
    store = workspace_store(tmp_path)
    impatient = StatisticsStore(store.path, root=tmp_path, lock_wait_s=0.0)
    with lock_held(tmp_path / ".ptc-plus"):
        impatient.record(sample("waiting-1"))
        impatient.record(sample("waiting-2"))
    assert len(intake(tmp_path)) == 2
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_AFTER_REPLACE, str(tmp_path)], stdout=subprocess.PIPE, cwd=ROOT, text=True
    )
    assert child.stdout is not None
    assert child.stdout.readline() == "replaced\n"
    child.send_signal(signal.SIGKILL)
    assert child.wait(timeout=30) == -signal.SIGKILL
    child.stdout.close()
    assert len(intake(tmp_path)) == 2  # killed before it removed any
    folded = StatisticsStore(tmp_path / "nothing" / "statistics.json", root=tmp_path)  # the store file alone:
    folded.path.parent.mkdir()
    folded.path.write_bytes(store.path.read_bytes())  # a copy without the intake beside it
    assert folded.read().families() == 3  # the replace took the intake in
    view = store.read()
    assert view.families() == 3 and view.stats("host:a", REV, window=5, min_samples=1).used == 3
    store.record(sample("after"))
    assert intake(tmp_path) == []
    view = store.read()
    assert [family.sequence for family in view.payload.families] == [1, 2, 3, 4]
    assert view.stats("host:a", REV, window=5, min_samples=1).used == 4


STOPPED_IN_INTAKE = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from ptc_plus.statistics import Evidence, FamilySample, workspace_store
    import ptc_plus.statistics.intake as intake

    real_fsync = os.fsync
    def fsync(fd):
        real_fsync(fd)
        if sys.argv[2] == "part":
            print("in-part", flush=True)  # the intake file is written under its private name, not published
            time.sleep(600)
    intake.os.fsync = fsync
    store = workspace_store(Path(sys.argv[1]))
    store.lock_wait_s = 600.0
    store.record(FamilySample(
        family_id="waiting", workspace=sys.argv[1], plan_config_revision="c",
        evidence=[Evidence(identity="host:a", revision="{rev}", disclosure="full", used=True)]))
    """
).format(rev=REV)


@pytest.mark.parametrize("where", ["part", "published"])
def test_a_writer_killed_in_the_intake_loses_only_what_it_never_published(tmp_path: Path, where: str) -> None:
    store = workspace_store(tmp_path)
    with lock_held(tmp_path / ".ptc-plus"):
        child = subprocess.Popen(
            [sys.executable, "-c", STOPPED_IN_INTAKE, str(tmp_path), where], stdout=subprocess.PIPE, cwd=ROOT, text=True
        )
        assert child.stdout is not None
        if where == "part":
            assert child.stdout.readline() == "in-part\n"
        else:
            while not [name for name in intake(tmp_path) if not name.endswith(".part")]:
                assert child.poll() is None  # published next: then the child waits for the lock (600 s)
                time.sleep(0.01)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        child.stdout.close()
        assert len(intake(tmp_path)) == 1
        assert store.read().families() == (1 if where == "published" else 0)
    store.record(sample("after"))  # the dead writer's part is swept; a published sample is folded
    view = store.read()
    assert intake(tmp_path) == [] and sorted(p.name for p in (tmp_path / ".ptc-plus").iterdir()) == ["statistics.json"]
    assert view.families() == (2 if where == "published" else 1)
