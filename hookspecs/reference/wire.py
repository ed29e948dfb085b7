"""The reference host's one serialization layer (cattrs + orjson).

Value types of the contract are (un)structured by one converter; every
persisted payload carries an integer ``version``.
"""

from __future__ import annotations

from typing import Any, TypeVar

import orjson
from cattrs.preconf.orjson import make_converter

T = TypeVar("T")

converter = make_converter(omit_if_default=False)


def structure(data: Any, cls: type[T]) -> T:
    return converter.structure(data, cls)


def unstructure(obj: Any) -> Any:
    return converter.unstructure(obj)


def detached(value: Any) -> Any:
    """A deep, JSON-only copy: later mutation of ``value`` cannot alter what was logged."""
    return orjson.loads(orjson.dumps(value))
