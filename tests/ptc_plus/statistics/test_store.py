"""The statistics store: upserts, windows, coverage, bounds and the file it leaves (ADR 0066)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from ptc_plus.statistics import (
    NO_SAMPLE,
    CapabilityStats,
    Evidence,
    FamilySample,
    StatisticsStore,
    StatisticsStoreUnwritable,
    user_store,
    workspace_store,
)
from ptc_plus.statistics.codec import EMPTY, encode
from ptc_plus.statistics.store import RETIRED_CAP, apply, compact

REV = "sha256:aaaaaaaaaaaaaaaa"
SECRET = "hunter2-tops3cret"


def evidence(identity: str, *, used: bool = False, revision: str = REV, disclosure: str = "full") -> Evidence:
    return Evidence(identity=identity, revision=revision, disclosure=disclosure, used=used)  # type: ignore[arg-type]


def sample(family: str, *items: Evidence, config: str = "sha256:config") -> FamilySample:
    return FamilySample(family_id=family, workspace="/ws", plan_config_revision=config, evidence=items)


def stats(store: StatisticsStore, identity: str, *, window: int = 20, min_samples: int = 1) -> CapabilityStats:
    return store.read().stats(identity, REV, window=window, min_samples=min_samples)


@pytest.fixture
def store(tmp_path: Path) -> StatisticsStore:
    return workspace_store(tmp_path)


def test_a_family_counts_once_per_capability(store: StatisticsStore) -> None:
    store.record(sample("f1", evidence("host:a", used=True), evidence("host:b")))
    store.record(sample("f2", evidence("host:a"), evidence("host:b")))
    assert stats(store, "host:a") == CapabilityStats(available=2, used=1, coverage=0.5, sufficient=True)
    assert stats(store, "host:b") == CapabilityStats(available=2, used=0, coverage=0.0, sufficient=True)
    assert store.read().families() == 2


def test_absent_capabilities_do_not_dilute_coverage(store: StatisticsStore) -> None:
    store.record(sample("f1", evidence("host:a", used=True)))
    for n in range(30):  # families where host:a was absent or off: not in its denominator
        store.record(sample(f"other{n}", evidence("host:b")))
    assert stats(store, "host:a") == CapabilityStats(available=1, used=1, coverage=1.0, sufficient=True)


def test_no_sample_is_not_zero_percent(store: StatisticsStore) -> None:
    for n in range(5):
        store.record(sample(f"f{n}", evidence("host:old")))
    assert stats(store, "host:old").coverage == 0.0  # long available, never used
    assert stats(store, "host:new") == NO_SAMPLE  # newly installed: no sample
    assert NO_SAMPLE.coverage is None


def test_minimum_samples(store: StatisticsStore) -> None:
    for n in range(4):
        store.record(sample(f"f{n}", evidence("host:a", used=True)))
    assert not stats(store, "host:a", min_samples=5).sufficient
    store.record(sample("f4", evidence("host:a")))
    assert stats(store, "host:a", min_samples=5) == CapabilityStats(available=5, used=4, coverage=0.8, sufficient=True)


def test_the_window_takes_the_newest_families_where_the_capability_was_available(store: StatisticsStore) -> None:
    store.record(sample("old", evidence("host:a", used=True)))
    for n in range(3):
        store.record(sample(f"new{n}", evidence("host:a")))
        store.record(sample(f"without{n}", evidence("host:b")))
    assert stats(store, "host:a", window=3) == CapabilityStats(available=3, used=0, coverage=0.0, sufficient=True)
    assert stats(store, "host:a", window=4).used == 1


def test_replaying_a_sample_leaves_the_file_byte_identical(store: StatisticsStore) -> None:
    first = sample("f1", evidence("host:a", used=True), evidence("host:b", disclosure="on-demand"))
    store.record(first)
    store.record(sample("f2", evidence("host:a")))
    before = store.path.read_bytes()
    mtime = store.path.stat().st_mtime_ns
    store.record(first)
    store.record(sample("f2", evidence("host:a")))
    assert store.path.read_bytes() == before
    assert store.path.stat().st_mtime_ns == mtime  # not even rewritten


def test_a_revised_family_keeps_its_place(store: StatisticsStore) -> None:
    store.record(sample("resumed", evidence("host:a")))
    for n in range(3):
        store.record(sample(f"f{n}", evidence("host:a")))
    # The family is resumed and settles again: it used host:a this time. Same place, no new sample.
    store.record(sample("resumed", evidence("host:a", used=True)))
    view = store.read()
    assert view.families() == 4
    assert view.stats("host:a", REV, window=4, min_samples=1).used == 1
    assert view.stats("host:a", REV, window=3, min_samples=1).used == 0  # still the oldest of the four
    assert [f.sequence for f in view.payload.families] == [1, 2, 3, 4]


def test_a_revision_can_drop_a_capability(store: StatisticsStore) -> None:
    store.record(sample("f1", evidence("host:a"), evidence("host:b")))
    store.record(sample("f1", evidence("host:b", used=True)))
    assert stats(store, "host:a") == NO_SAMPLE
    assert stats(store, "host:b").used == 1


def test_disclosure_is_recorded(store: StatisticsStore) -> None:
    store.record(sample("f1", evidence("host:a", disclosure="on-demand"), evidence("host:b")))
    data = orjson.loads(store.path.read_bytes())
    by_identity = {c["identity"]: c["revisions"][0] for c in data["capabilities"]}
    assert by_identity["host:a"]["on_demand"] == [1]
    assert by_identity["host:b"]["on_demand"] == []


def test_a_family_with_nothing_available_is_not_stored(store: StatisticsStore) -> None:
    store.record(sample("empty"))
    assert not store.path.exists()
    assert store.read().status == "missing"


def test_the_store_holds_no_user_content(store: StatisticsStore) -> None:
    store.record(
        FamilySample(
            family_id=f"session-{SECRET}",
            workspace=f"/home/{SECRET}",
            plan_config_revision="sha256:config",
            evidence=(evidence("host:a", used=True),),
        )
    )
    assert SECRET.encode() not in store.path.read_bytes()


def test_sample_refuses_a_repeated_capability_and_bad_disclosure() -> None:
    with pytest.raises(ValueError, match="host:a"):
        sample("f", evidence("host:a"), evidence("host:a", used=True))
    with pytest.raises(ValueError, match="disclosure"):
        evidence("host:a", disclosure="off")


CAPABILITIES = [f"mcp:server/tool_{n:02d}" for n in range(20)]


def growing_samples(count: int) -> Iterator[FamilySample]:
    """Families over 20 capabilities, each available in 3 of 4 families and used in 1 of 3."""
    for n in range(count):
        items = [evidence(c, used=(n + i) % 3 == 0) for i, c in enumerate(CAPABILITIES) if (n + i) % 4 != 0]
        yield sample(f"family-{n}", *items)


def test_size_stays_flat_as_families_grow() -> None:
    """5,000 families through what ``record`` does (apply, compact, encode) without the disk: the size stops
    growing once each capability's retention and the retired keys are full."""
    payload = EMPTY
    sizes = {}
    for n, item in enumerate(growing_samples(5000), start=1):
        payload = compact(apply(payload, item), retention=50)
        if n in (1500, 2500, 5000):
            sizes[n] = len(encode(payload))
    assert payload.next_sequence == 5001
    assert len(payload.families) <= 70  # each capability is in 3 of 4 families: its 50 span about 67
    assert len(payload.retired) == RETIRED_CAP
    # Sequence numbers may gain a digit; nothing else grows.
    assert sizes[5000] <= sizes[1500] * 1.05, sizes
    assert sizes[5000] < 40 * 1024, sizes  # 34.2 kB measured


@pytest.mark.slow
def test_size_stays_flat_on_disk(tmp_path: Path) -> None:
    """The same 5,000 families recorded one by one into a real store (about 20 s: a lock and an fsync each)."""
    store = workspace_store(tmp_path, retention=50)
    sizes = {}
    for n, item in enumerate(growing_samples(5000), start=1):
        store.record(item)
        if n in (1500, 2500, 5000):
            sizes[n] = store.path.stat().st_size
    view = store.read()
    assert view.families() == 5000
    assert view.stats(CAPABILITIES[0], REV, window=50, min_samples=1).available == 50
    assert sizes[5000] <= sizes[1500] * 1.05, sizes
    assert sizes[5000] < 40 * 1024, sizes  # 34.2 kB measured


def test_a_displaced_family_does_not_come_back(tmp_path: Path) -> None:
    store = workspace_store(tmp_path, retention=2)
    store.record(sample("old", evidence("host:a")))
    store.record(sample("f1", evidence("host:a")))
    store.record(sample("f2", evidence("host:a")))
    before = store.path.read_bytes()
    store.record(sample("old", evidence("host:a", used=True)))  # resumed long after: its place is gone
    assert store.path.read_bytes() == before
    assert stats(store, "host:a").used == 0


def test_a_window_larger_than_retention_sees_the_retained_families(tmp_path: Path) -> None:
    store = workspace_store(tmp_path, retention=3)
    for n in range(5):
        store.record(sample(f"f{n}", evidence("host:a", used=n == 0)))
    assert stats(store, "host:a", window=20) == CapabilityStats(available=3, used=0, coverage=0.0, sufficient=True)


def test_reset_forgets_everything(store: StatisticsStore) -> None:
    store.record(sample("f1", evidence("host:a", used=True)))
    store.reset()
    assert store.read().status == "missing"
    store.record(sample("f1", evidence("host:a")))
    assert store.read().families() == 1
    assert stats(store, "host:a").used == 0


def test_reset_without_a_store_is_a_no_op(tmp_path: Path) -> None:
    workspace_store(tmp_path).reset()
    assert not (tmp_path / ".ptc-plus").exists()
    workspace_store(tmp_path / "no-such-workspace").reset()
    assert not (tmp_path / "no-such-workspace").exists()


def test_the_user_store_lives_beside_the_user_config(tmp_path: Path) -> None:
    store = user_store({"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert store.path == tmp_path / "xdg" / "ptc-plus" / "statistics.json"
    store.record(sample("f1", evidence("host:a", used=True)))
    assert stats(store, "host:a").used == 1
    assert user_store({"HOME": str(tmp_path)}).path == tmp_path / ".config" / "ptc-plus" / "statistics.json"


def test_the_workspace_store_creates_its_directory_and_leaves_no_lock_file(tmp_path: Path) -> None:
    store = workspace_store(tmp_path)
    store.record(sample("f1", evidence("host:a")))
    assert sorted(p.name for p in (tmp_path / ".ptc-plus").iterdir()) == ["statistics.json"]


def test_a_symlinked_store_directory_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / ".ptc-plus").symlink_to(elsewhere)
    store = workspace_store(workspace)
    with pytest.raises(StatisticsStoreUnwritable) as raised:
        store.record(sample("f1", evidence("host:a")))
    assert raised.value.code == "PTC-5004"
    assert list(elsewhere.iterdir()) == []
    assert store.read().status == "corrupt"  # what is there is not a store we can read: no vote


def test_a_missing_workspace_is_unwritable_not_created(tmp_path: Path) -> None:
    store = workspace_store(tmp_path / "gone")
    with pytest.raises(StatisticsStoreUnwritable):
        store.record(sample("f1", evidence("host:a")))
    assert not (tmp_path / "gone").exists()
    assert store.read().status == "missing"


def test_stale_temporary_files_of_killed_writers_are_swept(store: StatisticsStore) -> None:
    store.record(sample("f1", evidence("host:a")))
    stale = store.path.parent / ".statistics.json.0123456789ab.tmp"
    stale.write_bytes(b"half a sto")
    foreign = store.path.parent / ".config.toml.0123456789ab.tmp"
    foreign.write_bytes(b"not ours")
    store.record(sample("f2", evidence("host:a")))
    assert not stale.exists()
    assert foreign.exists()


def test_window_must_be_positive(store: StatisticsStore) -> None:
    with pytest.raises(ValueError):
        store.read().stats("host:a", REV, window=0, min_samples=1)


def test_latest_revision_and_capabilities(store: StatisticsStore) -> None:
    store.record(sample("f1", evidence("host:a", revision="sha256:old")))
    store.record(sample("f2", evidence("host:a", revision="sha256:new"), evidence("host:b")))
    view = store.read()
    assert view.capabilities() == ("host:a", "host:b")
    assert view.latest_revision("host:a") == ("sha256:new", "")
    assert view.latest_revision("host:c") is None
