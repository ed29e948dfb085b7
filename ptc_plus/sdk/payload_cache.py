"""What the SDK needs of a cache of derived bytes; :class:`ptc_plus.capabilities.disk_cache.DiskCache` is one.

A protocol here, because the SDK sits below ``capabilities`` (ADR 0057) and must not import it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol


class PayloadCache(Protocol):
    """Bytes by ``(kind, key)``; misses are ``None`` and nothing here raises (ADR 0078)."""

    def key(self, parts: Iterable[bytes]) -> str:
        """A key naming ``parts`` together with the code that derives the payload."""
        ...

    def load(self, kind: str, key: str) -> bytes | None: ...

    def store(self, kind: str, key: str, payload: bytes) -> bool: ...
