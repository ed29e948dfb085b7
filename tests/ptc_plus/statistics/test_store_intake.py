"""The store's intake: samples that wait for the writers' lock count, fold once, and fail loudly (ADR 0091)."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from ptc_plus.statistics import (
    Evidence,
    FamilySample,
    StatisticsStore,
    StatisticsStoreCorrupt,
    StatisticsStoreUnwritable,
    workspace_store,
)

ROOT = Path(__file__).resolve().parents[3]
REV = "sha256:aaaaaaaaaaaaaaaa"
FIXTURES = Path(__file__).resolve().parents[2] / "data" / "statistics"


def sample(family: str, *, used: bool = True, identity: str = "host:a") -> FamilySample:
    return FamilySample(
        family_id=family,
        workspace="/ws",
        plan_config_revision="sha256:config",
        evidence=(Evidence(identity=identity, revision=REV, disclosure="full", used=used),),
    )


NOTHING = FamilySample(family_id="nothing", workspace="/ws", plan_config_revision="c", evidence=())
"""A family with nothing available: never stored, so recording it only folds the intake."""


@contextlib.contextmanager
def locked(directory: Path) -> Iterator[None]:
    """The writers' lock held by this test (another open file description: it excludes the store's own)."""
    directory.mkdir(parents=True, exist_ok=True)
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def waiting(store: StatisticsStore) -> list[str]:
    return sorted(p.name for p in store.path.parent.iterdir() if ".pending-" in p.name)


@pytest.fixture
def store(tmp_path: Path) -> StatisticsStore:
    store = workspace_store(tmp_path)
    store.lock_wait_s = 0.0  # a busy lock sends the sample to the intake at once
    return store


def test_a_sample_waiting_in_the_intake_counts_and_is_folded_by_the_next_writer(store: StatisticsStore) -> None:
    store.record(sample("f1"))
    with locked(store.path.parent):
        store.record(sample("f2", used=False))
        (name,) = waiting(store)
        assert orjson.loads((store.path.parent / name).read_bytes())["key"] != "f2"  # a digest, never the id
        view = store.read()
        assert (view.families(), view.stats("host:a", REV, window=5, min_samples=1).used) == (2, 1)
    store.record(NOTHING)
    assert waiting(store) == []
    view = store.read()
    assert [family.sequence for family in view.payload.families] == [1, 2]
    assert view.stats("host:a", REV, window=5, min_samples=1).used == 1


def test_a_family_revised_twice_in_the_intake_keeps_its_place_and_its_last_sample(store: StatisticsStore) -> None:
    store.record(sample("f1"))
    store.record(sample("f2"))
    with locked(store.path.parent):
        store.record(sample("f1", used=False))
        store.record(sample("f1", identity="host:b"))  # resumed again: only host:b was available then
    store.record(NOTHING)
    view = store.read()
    assert [family.sequence for family in view.payload.families] == [1, 2]
    assert view.stats("host:a", REV, window=5, min_samples=1).available == 1  # f2 only
    assert view.stats("host:b", REV, window=5, min_samples=1).available == 1  # f1, at its old place


def test_replaying_through_the_intake_leaves_the_file_untouched(store: StatisticsStore) -> None:
    store.record(sample("f1"))
    before, mtime = store.path.read_bytes(), store.path.stat().st_mtime_ns
    with locked(store.path.parent):
        store.record(sample("f1"))
    store.record(NOTHING)
    assert waiting(store) == []
    assert store.path.read_bytes() == before and store.path.stat().st_mtime_ns == mtime


def test_a_damaged_intake_file_costs_the_vote_visibly_and_reset_clears_it(store: StatisticsStore) -> None:
    store.record(sample("f1"))
    before = store.path.read_bytes()
    damaged = store.path.parent / "statistics.json.pending-00000000000000000001-0123abcd"
    damaged.write_bytes(b'{"version": 1, "key": 3}')
    view = store.read()
    assert view.status == "corrupt" and view.problem is not None and view.problem.code == "PTC-5002"
    assert damaged.name in view.problem.message("en")
    assert view.kept is not None and view.kept.read_bytes() == damaged.read_bytes()
    with pytest.raises(StatisticsStoreCorrupt):
        store.record(sample("f2"))
    assert store.path.read_bytes() == before and waiting(store) == [damaged.name]
    store.reset()
    assert waiting(store) == [] and store.read().status == "missing"
    store.record(sample("f2"))
    assert store.read().families() == 1


def test_an_older_store_with_samples_waiting_migrates_without_loss(store: StatisticsStore) -> None:
    original = (FIXTURES / "statistics-v0.json").read_bytes()
    store.path.parent.mkdir()
    store.path.write_bytes(original)
    with locked(store.path.parent):
        store.record(sample("waiting"))
        view = store.read()
        assert view.status == "ok" and view.families() == 5  # the four of v0, then the one waiting
        assert store.path.read_bytes() == original  # reading migrates in memory only
    store.record(sample("next"))
    assert store.path.with_name("statistics.json.v0.bak").read_bytes() == original  # the original is kept
    after = store.read()
    assert after.from_version == 2 and [f.sequence for f in after.payload.families] == [1, 2, 3, 4, 5, 6]
    assert waiting(store) == []


def test_a_full_disk_is_said_loudly_and_changes_nothing(
    store: StatisticsStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.record(sample("f1"))
    before = store.path.read_bytes()

    def full(fd: int) -> None:  # a full disk shows at the latest when the data is flushed
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(StatisticsStoreUnwritable) as direct:
        store.record(sample("f2"))  # the lock is free: the store itself is rewritten
    with locked(store.path.parent), pytest.raises(StatisticsStoreUnwritable) as queued:
        store.record(sample("f3"))  # the lock is busy: the intake is written
    monkeypatch.undo()
    for refused in (direct, queued):
        assert refused.value.code == "PTC-5004" and "No space left on device" in refused.value.message("en")
    assert store.path.read_bytes() == before
    assert sorted(p.name for p in store.path.parent.iterdir()) == ["statistics.json"]


READ_ONLY = textwrap.dedent(
    """
    import sys, orjson
    from pathlib import Path
    from ptc_plus.statistics import Evidence, FamilySample, StatisticsStoreUnwritable, workspace_store

    store = workspace_store(Path(sys.argv[1]))
    view = store.read()
    try:
        store.record(FamilySample(family_id="f2", workspace=sys.argv[1], plan_config_revision="c",
                                  evidence=[Evidence(identity="host:a", revision="{rev}", disclosure="full",
                                                     used=True)]))
        refused = None
    except StatisticsStoreUnwritable as exc:
        refused = [exc.code, exc.message("en")]
    print(orjson.dumps({{"status": view.status, "families": view.families(), "refused": refused}}).decode())
    """
).format(rev=REV)


BWRAP_READ_ONLY = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]


@pytest.mark.needs_bwrap
def test_on_a_read_only_file_system_the_store_is_read_and_a_recording_refused_loudly(tmp_path: Path) -> None:
    store = workspace_store(tmp_path)
    store.record(sample("f1"))
    before = sorted(p.name for p in store.path.parent.iterdir())
    # A real read-only mount: everything bound read-only in a bubblewrap namespace.
    done = subprocess.run(
        [*BWRAP_READ_ONLY, "--chdir", str(ROOT), sys.executable, "-c", READ_ONLY, str(tmp_path)],
        capture_output=True,
        check=True,
        timeout=120,
    )
    seen = orjson.loads(done.stdout)
    assert (seen["status"], seen["families"]) == ("ok", 1)
    assert seen["refused"][0] == "PTC-5004" and "Read-only file system" in seen["refused"][1]
    assert sorted(p.name for p in store.path.parent.iterdir()) == before
