"""The disk cache (ADR 0078): atomic entries, damaged and foreign entries are misses, bounded, located by env."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ptc_plus.capabilities import disk_cache
from ptc_plus.capabilities.disk_cache import DiskCache, cache_directory, cache_key, default_cache

KIND = "test-kind"
KEY = "a" * 64


def test_a_stored_payload_loads_back_and_other_keys_miss(tmp_path: Path) -> None:
    cache = DiskCache(directory=tmp_path)
    assert cache.load(KIND, KEY) is None
    assert cache.store(KIND, KEY, b"payload \x00\xff")
    assert cache.load(KIND, KEY) == b"payload \x00\xff"
    assert cache.load(KIND, "b" * 64) is None
    assert cache.load("other-kind", KEY) is None
    assert not [p for p in (tmp_path / KIND).iterdir() if p.name.startswith(".tmp-")]


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],  # torn: a writer killed mid-write without the rename
        lambda data: b"",
        lambda data: data[:-1] + bytes([data[-1] ^ 1]),  # one payload bit flipped
        lambda data: b"not a cache entry at all",
        lambda data: data + b"trailing",
    ],
    ids=["truncated", "empty", "bit-flip", "garbage", "trailing"],
)
def test_a_damaged_entry_is_a_miss_and_a_new_store_replaces_it(tmp_path: Path, damage: object) -> None:
    cache = DiskCache(directory=tmp_path)
    cache.store(KIND, KEY, b"x" * 1000)
    path = cache.path(KIND, KEY)
    path.write_bytes(damage(path.read_bytes()))  # type: ignore[operator]
    assert cache.load(KIND, KEY) is None
    assert cache.store(KIND, KEY, b"y" * 10)
    assert cache.load(KIND, KEY) == b"y" * 10


def test_an_entry_of_another_format_version_is_a_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = DiskCache(directory=tmp_path)
    monkeypatch.setattr(disk_cache, "FORMAT_VERSION", disk_cache.FORMAT_VERSION + 1)
    cache.store(KIND, KEY, b"from a newer release")
    assert cache.load(KIND, KEY) == b"from a newer release"
    monkeypatch.undo()
    assert cache.load(KIND, KEY) is None


def test_an_entry_copied_under_another_key_is_a_miss(tmp_path: Path) -> None:
    cache = DiskCache(directory=tmp_path)
    cache.store(KIND, KEY, b"payload")
    other = cache.path(KIND, "c" * 64)
    other.write_bytes(cache.path(KIND, KEY).read_bytes())
    assert cache.load(KIND, "c" * 64) is None


def test_the_code_version_is_part_of_every_key(monkeypatch: pytest.MonkeyPatch) -> None:
    before = cache_key([b"same", b"inputs"])
    assert cache_key([b"same", b"inputs"]) == before
    assert cache_key([b"samei", b"nputs"]) != before  # parts are length-prefixed
    monkeypatch.setattr(disk_cache, "code_version", lambda: "another release")
    assert cache_key([b"same", b"inputs"]) != before


def test_an_unwritable_cache_never_raises(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    cache = DiskCache(directory=blocker)
    assert cache.store(KIND, KEY, b"payload") is False
    assert cache.load(KIND, KEY) is None


def test_names_that_could_leave_the_directory_are_refused(tmp_path: Path) -> None:
    cache = DiskCache(directory=tmp_path)
    for bad in ("../x", "a/b", "", ".hidden", "ü"):
        assert cache.store(bad, KEY, b"x") is False
        assert cache.load(KIND, bad) is None
    assert list(tmp_path.iterdir()) == []


def test_eviction_keeps_the_most_recently_used_entries_within_bounds(tmp_path: Path) -> None:
    cache = DiskCache(directory=tmp_path, max_entries=3, max_bytes=10_000)
    for n in range(3):
        cache.store(KIND, f"key{n}", b"x" * 100)
        os.utime(cache.path(KIND, f"key{n}"), (1000 + n, 1000 + n))
    cache.load(KIND, "key0")  # a hit makes key0 the youngest: key1 is now the least recently used
    cache.store(KIND, "key3", b"x" * 100)
    kept = sorted(p.stem for p in (tmp_path / KIND).glob("*.bin"))
    assert kept == ["key0", "key2", "key3"]
    small = DiskCache(directory=tmp_path, max_entries=100, max_bytes=2 * 200)  # an entry is ~170 bytes
    small.store(KIND, "big", b"x" * 100)
    assert len(list((tmp_path / KIND).glob("*.bin"))) == 2


def test_stale_temporary_files_of_killed_writers_are_swept(tmp_path: Path) -> None:
    cache = DiskCache(directory=tmp_path)
    (tmp_path / KIND).mkdir()
    stale = tmp_path / KIND / ".tmp-killed.bin"
    stale.write_bytes(b"half")
    os.utime(stale, (1, 1))
    fresh = tmp_path / KIND / ".tmp-writing-now.bin"
    fresh.write_bytes(b"half")
    cache.store(KIND, KEY, b"payload")
    assert not stale.exists()
    assert fresh.exists()  # another session may be writing it right now


_WRITER = """
import sys
from pathlib import Path
from ptc_plus.capabilities.disk_cache import DiskCache
cache = DiskCache(directory=Path(sys.argv[1]))
n = int(sys.argv[2])
payload = bytes([n]) * (300_000 + n * 7919)
for _ in range(int(sys.argv[3])):
    assert cache.store("race", "k" * 64, payload)
"""


def test_concurrent_writer_processes_never_leave_a_torn_entry(tmp_path: Path) -> None:
    writers = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path), str(n), "25"], cwd=Path.cwd())
        for n in range(1, 5)
    ]
    cache = DiskCache(directory=tmp_path)
    path = tmp_path / "race" / ("k" * 64 + ".bin")
    seen: set[int] = set()
    while any(w.poll() is None for w in writers):
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            continue
        # Every file ever visible under the entry's name is complete (checked without the loader's own checks).
        payload = disk_cache._unpack(raw, "race", "k" * 64)
        assert payload is not None, "a reader saw a torn entry"
        n = payload[0]
        assert payload == bytes([n]) * (300_000 + n * 7919)
        seen.add(n)
    assert [w.wait() for w in writers] == [0, 0, 0, 0]
    final = cache.load("race", "k" * 64)
    assert final is not None and final[0] in {1, 2, 3, 4}
    assert not [p for p in (tmp_path / "race").iterdir() if p.name.startswith(".tmp-")]


def test_where_the_cache_lives(tmp_path: Path) -> None:
    home = {"HOME": "/home/someone"}
    assert cache_directory(home) == Path("/home/someone/.cache/ptc-plus")
    assert cache_directory({**home, "XDG_CACHE_HOME": "/xdg"}) == Path("/xdg/ptc-plus")
    assert cache_directory({**home, "XDG_CACHE_HOME": "relative"}) == Path("/home/someone/.cache/ptc-plus")
    assert cache_directory({**home, "PTC_PLUS_CACHE_DIR": str(tmp_path)}) == tmp_path
    for off in ("off", "0", "no", "FALSE"):
        assert cache_directory({**home, "PTC_PLUS_CACHE": off}) is None
        assert default_cache({**home, "PTC_PLUS_CACHE": off}) is None


def test_the_suite_never_uses_the_real_home_cache() -> None:
    chosen = cache_directory()
    assert chosen is not None
    assert chosen != Path.home() / ".cache" / "ptc-plus"
    assert "ptc-plus-test-cache-" in str(chosen)
