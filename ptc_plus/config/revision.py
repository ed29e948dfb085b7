"""The config revision: which effective configuration a plan was built from."""

from __future__ import annotations

import hashlib

from hookspecs.serialization import canonical_bytes
from ptc_plus.config.model import PtcConfig


def config_revision(config: PtcConfig) -> str:
    """``sha256:<hex>`` of the effective config's canonical bytes (sorted-key JSON: independent of file layout,
    key order and comments); equal effective configs give equal revisions."""
    return "sha256:" + hashlib.sha256(canonical_bytes(config)).hexdigest()
