"""A program's keywords back to a tool's real argument names (ADR 0018).

The SDK shows an argument whose JSON name is not a usable Python name under
a mapped identifier (``odd-name`` → ``odd_name``, ``class`` → ``class_``); a
program writes ``await tools.x(odd_name=1)``. Before a nested call is
dispatched, each keyword that is such an identifier for the tool's *current*
spec becomes the real name again, with the SDK's own table
(:attr:`ptc_plus.sdk.RenderedTool.argument_names`). Keywords that are real
names already, or unknown, pass through unchanged, so the host's JSON Schema
validation still reports what is wrong. Tables are cached per input schema.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import orjson

from hookspecs import JSONObject, ToolSpec
from ptc_plus.runtime.errors import ArgumentConflict
from ptc_plus.sdk import render_tool

_CACHE_LIMIT = 1024

Renames = Mapping[str, str]
"""Python identifier → real JSON name, only for arguments whose names differ."""

_by_schema: dict[bytes, Renames] = {}
_by_spec: dict[int, tuple[ToolSpec, Renames]] = {}


def renames_for(spec: ToolSpec) -> Renames:
    """The identifiers of ``spec``'s arguments that differ from their real names (cached)."""
    entry = _by_spec.get(id(spec))
    if entry is not None and entry[0] is spec:
        return entry[1]
    key = orjson.dumps(spec.input_schema, option=orjson.OPT_SORT_KEYS)
    renames = _by_schema.get(key)
    if renames is None:
        table = render_tool(spec).argument_names
        renames = {identifier: name for identifier, name in table.items() if identifier != name}
        if len(_by_schema) >= _CACHE_LIMIT:
            _by_schema.clear()
        _by_schema[key] = renames
    if len(_by_spec) >= _CACHE_LIMIT:
        _by_spec.clear()
    # The spec itself is kept so that a recycled id() can never match another spec.
    _by_spec[id(spec)] = (spec, renames)
    return renames


def real_arguments(spec: ToolSpec, arguments: JSONObject) -> JSONObject:
    """``arguments`` with each SDK identifier replaced by its real name (the same object if none is).

    :raises ArgumentConflict: an argument given both by its identifier and by its real name.
    """
    renames = renames_for(spec)
    if not renames or not any(key in renames for key in arguments):
        return arguments
    real: dict[str, object] = {}
    for key, value in arguments.items():
        name = renames.get(key, key)
        if name != key and name in arguments:
            raise ArgumentConflict(tool=spec.name, name=name, identifier=key)
        real[name] = value
    return real


class SpecLookup:
    """The current spec of a tool by name, from a view re-read at every call (cheap when unchanged)."""

    def __init__(self) -> None:
        self._view: Sequence[ToolSpec] = ()
        self._by_name: dict[str, ToolSpec] = {}

    def get(self, view: Sequence[ToolSpec], name: str) -> ToolSpec | None:
        # Views are usually rebuilt tuples of the same spec objects: == compares them by identity first.
        if view is not self._view and view != self._view:
            self._view = view
            self._by_name = {spec.name: spec for spec in view}
        return self._by_name.get(name)
