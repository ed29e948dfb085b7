"""The converter for config files and the canonical config form.

Config files follow the plugin's one rule set (:mod:`ptc_plus.serialization`):
TOML already has types, so structuring never coerces, and hooks raise
:class:`Rejected` with a reason key so :mod:`ptc_plus.config.validate` can
localize it.
"""

from __future__ import annotations

from ptc_plus.serialization import Rejected, converter, make_converter

CONVERTER = converter

__all__ = ["CONVERTER", "Rejected", "make_converter"]
