"""Catalog, index and snapshot through the disk cache (ADR 0078): a hit equals a build, damage is rebuilt.

Also the top-``limit`` selection of :func:`~ptc_plus.discovery.ranker.ranking`: cut to a limit, it gives
exactly the head of the full ranking (the cut is a performance change only).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from hookspecs.types import ToolSpec
from ptc_plus.capabilities import build_catalog
from ptc_plus.capabilities import catalog as catalog_module
from ptc_plus.capabilities.disk_cache import DiskCache
from ptc_plus.discovery import api as discovery
from ptc_plus.discovery import index as index_module
from ptc_plus.discovery.index import CACHE_KIND, build_index, cached_index, decode_index, encode_index
from ptc_plus.discovery.ranker import ranking
from ptc_plus.discovery.snapshot import CatalogSnapshot, build_snapshot
from ptc_plus.sdk import module as sdk_module
from tests.cli_runner import CliRunner

DATA = Path(__file__).resolve().parents[2] / "data"
QUERIES = [q["query"] for q in orjson.loads((DATA / "search_queries.json").read_bytes())["queries"]]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> DiskCache:
    """A scratch cache consulted for catalogs of any size (the corpus is below the real threshold)."""
    monkeypatch.setattr(index_module, "CACHE_ABOVE", 0)
    monkeypatch.setattr(catalog_module, "CACHE_ABOVE", 0)
    monkeypatch.setenv("PTC_PLUS_SEMANTIC", "off")
    return DiskCache(directory=tmp_path / "cache")


def _entries(cache: DiskCache, kind: str) -> list[Path]:
    return sorted((cache.directory / kind).glob("*.bin"))


def _answers(snapshot: CatalogSnapshot) -> bytes:
    return orjson.dumps([discovery.search(snapshot, q) for q in QUERIES[:40]] + [discovery.tree(snapshot)])


def test_a_cached_index_equals_a_built_one_and_ranks_byte_identically(
    corpus_specs: list[ToolSpec], cache: DiskCache
) -> None:
    capabilities = build_catalog(tools=corpus_specs, cache=None).managed()
    built = build_snapshot(build_catalog(tools=corpus_specs, cache=None), cache=None)
    keywords = built.index.keywords
    first = cached_index(capabilities, keywords, cache)
    assert len(_entries(cache, CACHE_KIND)) == 1
    hit = cached_index(capabilities, keywords, cache)
    reference = build_index(capabilities, keywords)
    assert hit == reference == first
    assert list(hit.postings) == list(reference.postings)  # order too, not only equality
    assert encode_index(hit) == encode_index(reference)
    for query in QUERIES:
        assert ranking(hit, query, limit=10) == ranking(reference, query, limit=10)


def test_a_session_over_a_known_catalog_builds_nothing_twice_and_answers_the_same(
    corpus_specs: list[ToolSpec], cache: DiskCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    uncached = build_snapshot(build_catalog(tools=corpus_specs, cache=None), cache=None)
    cold = build_snapshot(build_catalog(tools=corpus_specs, cache=cache), cache=cache)
    stored = {
        p: p.stat().st_mtime_ns for kind in (catalog_module.CACHE_KIND, CACHE_KIND) for p in _entries(cache, kind)
    }
    assert len(stored) == 2

    def no_build(*args: object, **kwargs: object) -> object:
        raise AssertionError("built again although the cache holds it")

    monkeypatch.setattr(index_module, "build_index", no_build)
    monkeypatch.setattr(catalog_module, "render_tool", no_build)
    monkeypatch.setattr(catalog_module, "tool_contract", no_build)
    warm = build_snapshot(build_catalog(tools=corpus_specs, cache=cache), cache=cache)
    assert warm.catalog == uncached.catalog
    assert [c.tool for c in warm.catalog.capabilities] == [c.tool for c in uncached.catalog.capabilities]
    assert warm.index == uncached.index and warm.costs == uncached.costs
    assert _answers(warm) == _answers(uncached) == _answers(cold)


def test_the_default_cache_follows_the_environment(
    corpus_specs: list[ToolSpec], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_module, "CACHE_ABOVE", 0)
    monkeypatch.setattr(catalog_module, "CACHE_ABOVE", 0)
    monkeypatch.setenv("PTC_PLUS_CACHE_DIR", str(tmp_path / "chosen"))
    build_snapshot(build_catalog(tools=corpus_specs))
    assert sorted(p.name for p in (tmp_path / "chosen").iterdir() if p.is_dir()) == [
        catalog_module.CACHE_KIND,
        CACHE_KIND,
    ]
    monkeypatch.setenv("PTC_PLUS_CACHE_DIR", str(tmp_path / "off"))
    monkeypatch.setenv("PTC_PLUS_CACHE", "off")
    build_snapshot(build_catalog(tools=corpus_specs))
    assert not (tmp_path / "off").exists()


@pytest.mark.parametrize("kind", [catalog_module.CACHE_KIND, CACHE_KIND])
def test_a_damaged_entry_is_rebuilt_and_replaced(corpus_specs: list[ToolSpec], cache: DiskCache, kind: str) -> None:
    uncached = build_snapshot(build_catalog(tools=corpus_specs, cache=None), cache=None)
    build_snapshot(build_catalog(tools=corpus_specs, cache=cache), cache=cache)
    (entry,) = _entries(cache, kind)
    entry.write_bytes(entry.read_bytes()[:100])
    rebuilt = build_snapshot(build_catalog(tools=corpus_specs, cache=cache), cache=cache)
    assert rebuilt.index == uncached.index and rebuilt.catalog == uncached.catalog
    assert cache.load(kind, entry.stem) is not None  # stored again, whole


def test_an_index_payload_of_another_format_or_shape_is_rebuilt(corpus_specs: list[ToolSpec], cache: DiskCache) -> None:
    capabilities = build_catalog(tools=corpus_specs, cache=None).managed()
    reference = build_snapshot(build_catalog(tools=corpus_specs, cache=None), cache=None).index
    keywords = reference.keywords
    cached_index(capabilities, keywords, cache)
    (entry,) = _entries(cache, CACHE_KIND)
    document = orjson.loads(encode_index(reference))
    foreigns: list[object] = [{**document, "version": 99}, {**document, "postings": [1, 2]}, [], {"version": 1}]
    for foreign in foreigns:
        payload = orjson.dumps(foreign)
        assert decode_index(payload, keywords) is None
        cache.store(CACHE_KIND, entry.stem, payload)
        assert cached_index(capabilities, keywords, cache) == reference
        assert decode_index(cache.load(CACHE_KIND, entry.stem) or b"", keywords) == reference


def test_a_cut_ranking_is_the_head_of_the_full_ranking(corpus_snapshot: CatalogSnapshot) -> None:
    index = corpus_snapshot.index
    for query in QUERIES:
        full = ranking(index, query)
        for limit in (1, 3, 10):
            cut = ranking(index, query, limit=limit)
            assert cut.matches == full.matches[:limit], query
            assert cut.total == full.total and cut.confident == full.confident


def test_cli_search_and_sdk_fill_the_cache_and_answer_the_same_from_it(
    run_cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PTC_LOCALE", "en")
    monkeypatch.setenv("PTC_PLUS_SEMANTIC", "off")
    for module in (index_module, catalog_module, sdk_module):
        monkeypatch.setattr(module, "CACHE_ABOVE", 0)
    monkeypatch.setenv("PTC_PLUS_CACHE_DIR", str(tmp_path / "cache"))
    tools = str(DATA / "mcp" / "git.json")
    search = ("capabilities", "search", "show the diff", "--tools", tools, "--workspace", str(tmp_path), "--json")
    first, first_sdk = run_cli(*search), run_cli("sdk", "--tools", tools)
    kinds = sorted(p.name for p in (tmp_path / "cache").iterdir() if p.is_dir())
    assert kinds == sorted([catalog_module.CACHE_KIND, CACHE_KIND, sdk_module.CACHE_KIND])
    again, again_sdk = run_cli(*search), run_cli("sdk", "--tools", tools)
    monkeypatch.setenv("PTC_PLUS_CACHE", "off")
    uncached, uncached_sdk = run_cli(*search), run_cli("sdk", "--tools", tools)
    assert first.code == again.code == uncached.code == 0
    assert first.out == again.out == uncached.out
    assert first_sdk.out == again_sdk.out == uncached_sdk.out and first_sdk.out


_KEY_IN_A_CHILD = """
import hashlib, sys
from pathlib import Path
from ptc_plus.capabilities import build_catalog
from ptc_plus.discovery.index import index_inputs
from ptc_plus.discovery.keywords import compile_keywords, default_keyword_index
from ptc_plus.sdk import spec_inputs
from ptc_plus.sdk.tools_file import load_tool_specs
specs = [s for p in sorted(Path(sys.argv[1]).glob("*.json")) for s in load_tool_specs(p)]
managed = build_catalog(tools=specs, cache=None).managed()
inputs = index_inputs(managed, compile_keywords(default_keyword_index())) + (spec_inputs(specs) or b"")
print(hashlib.sha256(inputs).hexdigest())
"""


def test_cache_keys_are_the_same_in_every_process() -> None:
    # Keyword synonyms are sets of strings: their order follows PYTHONHASHSEED unless the key sorts them.
    digests = {
        subprocess.run(
            [sys.executable, "-c", _KEY_IN_A_CHILD, str(DATA / "mcp")],
            check=True,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(digests) == 1
