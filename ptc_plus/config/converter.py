"""The converter for config files and the canonical config form.

Config files follow the one rule set of host and plugin (:mod:`hookspecs.serialization`):
TOML already has types, so structuring never coerces, and hooks raise
:class:`Rejected` with a reason key so :mod:`ptc_plus.config.validate` can
localize it.
"""

from __future__ import annotations

from hookspecs.serialization import Rejected, converter

CONVERTER = converter

__all__ = ["CONVERTER", "Rejected"]
