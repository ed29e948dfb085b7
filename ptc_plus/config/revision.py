"""The config revision: which effective configuration a plan was built from."""

from __future__ import annotations

import hashlib

import orjson

from ptc_plus.config.converter import CONVERTER
from ptc_plus.config.model import PtcConfig


def canonical_bytes(config: PtcConfig) -> bytes:
    """The effective config as sorted-key JSON: independent of file layout, key order and comments."""
    return orjson.dumps(CONVERTER.unstructure(config), option=orjson.OPT_SORT_KEYS)


def config_revision(config: PtcConfig) -> str:
    """``sha256:<hex>`` of :func:`canonical_bytes`; equal effective configs give equal revisions."""
    return "sha256:" + hashlib.sha256(canonical_bytes(config)).hexdigest()
