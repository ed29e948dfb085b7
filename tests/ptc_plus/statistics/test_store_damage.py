"""A damaged, newer or older store: a distinct reason, the file kept, never silently overwritten (ADR 0066)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from ptc_plus.statistics import (
    Evidence,
    FamilySample,
    StatisticsError,
    StatisticsMissing,
    StatisticsStore,
    StatisticsStoreCorrupt,
    StatisticsStoreFutureVersion,
    workspace_store,
)

REV = "sha256:aaaaaaaaaaaaaaaa"
FIXTURES = Path(__file__).resolve().parents[2] / "data" / "statistics"


def sample(family: str, *, used: bool = True) -> FamilySample:
    return FamilySample(
        family_id=family,
        workspace="/ws",
        plan_config_revision="sha256:config",
        evidence=(Evidence(identity="host:a", revision=REV, disclosure="full", used=used),),
    )


@pytest.fixture
def store(tmp_path: Path) -> StatisticsStore:
    store = workspace_store(tmp_path)
    store.record(sample("f1"))
    store.record(sample("f2", used=False))
    return store


def damaged_copies(store: StatisticsStore) -> list[Path]:
    return sorted(store.path.parent.glob("statistics.json.corrupt-*"))


def test_missing_store_has_no_vote_and_says_so(tmp_path: Path) -> None:
    view = workspace_store(tmp_path).read()
    assert view.status == "missing"
    assert isinstance(view.problem, StatisticsMissing)
    assert view.problem.code == "PTC-5001"
    assert "no usage statistics" in view.problem.message("en").lower()
    assert view.stats("host:a", REV, window=20, min_samples=1).coverage is None
    assert view.families() == 0


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda raw: raw[: len(raw) // 2], id="truncated"),
        pytest.param(lambda raw: b"\x00\xff garbage \x13" * 10, id="garbage"),
        pytest.param(lambda raw: b"", id="empty"),
        pytest.param(lambda raw: b"[1, 2, 3]", id="not-an-object"),
        pytest.param(lambda raw: raw.replace(b'"next_sequence":3', b'"next_sequence":"3"'), id="wrong-type"),
        pytest.param(lambda raw: raw.replace(b'"next_sequence":3', b'"next_sequence":2'), id="inconsistent"),
        pytest.param(lambda raw: raw[:-1] + b',"extra":1}', id="unknown-key"),
    ],
)
def test_a_damaged_store_is_corrupt_kept_aside_and_never_overwritten(store: StatisticsStore, damage) -> None:  # type: ignore[no-untyped-def]
    damaged = damage(store.path.read_bytes())
    store.path.write_bytes(damaged)

    view = store.read()
    assert view.status == "corrupt"
    assert isinstance(view.problem, StatisticsStoreCorrupt)
    assert view.problem.code == "PTC-5002"
    assert view.stats("host:a", REV, window=20, min_samples=1).coverage is None  # no vote, not 0 %
    assert view.kept is not None and view.kept.read_bytes() == damaged
    assert str(view.kept) in view.problem.message("en")

    with pytest.raises(StatisticsStoreCorrupt):
        store.record(sample("f3"))
    assert store.path.read_bytes() == damaged  # never overwritten
    assert damaged_copies(store) == [view.kept]  # kept once, however often it is met
    assert store.read().status == "corrupt"


def test_reset_replaces_a_damaged_store_and_keeps_the_copy(store: StatisticsStore) -> None:
    store.path.write_bytes(b"{")
    store.reset()
    assert [p.read_bytes() for p in damaged_copies(store)] == [b"{"]
    store.record(sample("f3"))
    assert store.read().status == "ok"
    assert store.read().families() == 1


def test_a_future_version_is_left_untouched(store: StatisticsStore) -> None:
    future = orjson.dumps({"version": 3, "something": "new"})
    store.path.write_bytes(future)
    view = store.read()
    assert view.status == "future-version"
    assert isinstance(view.problem, StatisticsStoreFutureVersion)
    assert view.problem.code == "PTC-5003"
    assert view.problem.params["found"] == 3
    with pytest.raises(StatisticsStoreFutureVersion):
        store.record(sample("f3"))
    assert store.path.read_bytes() == future
    assert damaged_copies(store) == []  # not damage: a newer release's file


def test_the_three_problems_have_distinct_codes_and_messages_in_both_locales(
    store: StatisticsStore, tmp_path: Path
) -> None:
    missing = workspace_store(tmp_path / "nothing-here").read().problem
    store.path.write_bytes(b"{")
    corrupt = store.read().problem
    store.path.write_bytes(b'{"version": 9}')
    future = store.read().problem
    problems = [missing, corrupt, future]
    assert all(isinstance(p, StatisticsError) for p in problems)
    assert len({p.code for p in problems if p}) == 3
    for lang in ("en", "zh"):
        assert len({p.message(lang) for p in problems if p}) == 3


def test_a_directory_at_the_store_place_is_corrupt_not_a_crash(tmp_path: Path) -> None:
    store = workspace_store(tmp_path)
    store.path.mkdir(parents=True)
    view = store.read()
    assert view.status == "corrupt"
    with pytest.raises(StatisticsStoreCorrupt):
        store.record(sample("f1"))
    assert store.path.is_dir()


def test_an_unreadable_store_loses_its_vote(store: StatisticsStore, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object, **__: object) -> bytes:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("ptc_plus.statistics.store.read_bytes", refuse)
    view = store.read()
    assert view.status == "corrupt"
    assert "Permission denied" in view.problem.message("en")  # type: ignore[union-attr]


def test_the_v0_fixture_migrates_in_memory_and_keeps_the_original_on_first_write(tmp_path: Path) -> None:
    original = (FIXTURES / "statistics-v0.json").read_bytes()
    store = workspace_store(tmp_path)
    store.path.parent.mkdir()
    store.path.write_bytes(original)

    view = store.read()
    assert view.status == "ok" and view.from_version == 0
    assert store.path.read_bytes() == original  # reading changes nothing
    # Four families in settling order; "b2" appears twice in v0 (a resumed family): one sample, its first place.
    assert view.families() == 4
    assert view.stats("host:read_file", "sha256:1111111111111111", window=20, min_samples=1).used == 2
    assert view.stats("mcp:github/create_issue", "sha256:2222222222222222", window=1, min_samples=1).used == 0
    assert view.stats("mcp:github/create_issue", "sha256:2222222222222222", window=2, min_samples=1).used == 1

    store.record(sample("new-family"))
    backup = store.path.with_name("statistics.json.v0.bak")
    assert backup.read_bytes() == original
    after = store.read()
    assert after.from_version == 2  # the current version (2 since ADR 0102)
    assert after.families() == 5
    assert [f.sequence for f in after.payload.families] == [1, 2, 3, 4, 5]
    assert b"family-secret-id" not in store.path.read_bytes()  # v0 kept raw ids; v1 keeps digests


def test_a_malformed_v0_store_is_corrupt(tmp_path: Path) -> None:
    store = workspace_store(tmp_path)
    store.path.parent.mkdir()
    store.path.write_bytes(b'{"version": 0, "families": [{"capabilities": {}}]}')
    assert store.read().status == "corrupt"


def test_an_earlier_backup_is_never_overwritten(tmp_path: Path) -> None:
    store = workspace_store(tmp_path)
    store.path.parent.mkdir()
    backup = store.path.with_name("statistics.json.v0.bak")
    backup.write_bytes(b"an earlier original")
    original = (FIXTURES / "statistics-v0.json").read_bytes()
    store.path.write_bytes(original)
    store.record(sample("new-family"))
    assert backup.read_bytes() == b"an earlier original"
    (kept,) = store.path.parent.glob("statistics.json.v0-*.bak")
    assert kept.read_bytes() == original
