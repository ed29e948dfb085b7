"""Tool views and JSON Schema validation of arguments."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import jsonschema
import orjson
from jsonschema.protocols import Validator

from hookspecs.i18n import message
from hookspecs.reference.errors import HostError
from hookspecs.reference.plain_schema import Check, plain_check
from hookspecs.services import ToolDefinition
from hookspecs.types import JSONObject, ToolSpec

MAX_ERRORS = 5
"""Validation problems reported for one call; validation stops after one more."""
MAX_ERROR_CHARS = 300
"""Longest reported problem (a message may quote the whole offending value)."""


class ToolView:
    """An agent's tools at one moment: ordered, names unique, schemas checked.

    A duplicate name raises ``HOST-0201``; an input schema that is not
    valid JSON Schema raises ``HOST-0202``.
    """

    def __init__(self, definitions: Iterable[ToolDefinition] = ()) -> None:
        self._definitions: dict[str, ToolDefinition] = {}
        self._validators: dict[str, Compiled] = {}
        for definition in definitions:
            name = definition.spec.name
            if name in self._definitions:
                raise HostError("HOST-0201", name=name)
            # A view is one revision of the contract (rebuilt when tools change): its validators are compiled
            # here, once, from the schemas' content, so a call pays no schema serialisation (ADR 0123).
            self._validators[name] = _compiled(_schema_key(definition.spec.input_schema))
            self._definitions[name] = definition

    def get(self, name: str) -> ToolDefinition | None:
        return self._definitions.get(name)

    def validator(self, name: str) -> Compiled:
        """The compiled validator of tool ``name``'s input schema as it was when this view was built."""
        return self._validators[name]

    def __iter__(self) -> Iterator[ToolDefinition]:
        return iter(self._definitions.values())

    def __len__(self) -> int:
        return len(self._definitions)

    def __contains__(self, name: object) -> bool:
        return name in self._definitions

    def specs(self) -> tuple[ToolSpec, ...]:
        return tuple(d.spec for d in self._definitions.values())

    def names(self) -> list[str]:
        return list(self._definitions)


class Compiled:
    """One input schema compiled: jsonschema's validator and, for a plain schema, a direct check equal to
    its verdict (:mod:`hookspecs.reference.plain_schema`) that answers valid arguments without it."""

    __slots__ = ("plain", "validator")

    def __init__(self, validator: Validator, plain: Check | None) -> None:
        self.validator = validator
        self.plain = plain


def validation_errors(spec: ToolSpec, arguments: Mapping[str, Any], compiled: Compiled | None = None) -> list[str]:
    """Problems of ``arguments`` against ``spec.input_schema`` as ``path: message`` lines (empty: valid).

    ``compiled``: the schema compiled, when the caller holds it (:meth:`ToolView.validator`); else it is
    looked up by the schema's content.

    At most :data:`MAX_ERRORS` are reported, each cut to :data:`MAX_ERROR_CHARS`, and validation
    stops once it found one more than that (a last line says that more were left out): an argument
    of a million wrong items costs a few errors, not a million (ADR 0087).
    """
    if compiled is None:
        compiled = _compiled(_schema_key(spec.input_schema))
    if compiled.plain is not None and compiled.plain(arguments):
        return []  # the verdict jsonschema gives, without its machinery (ADR 0123)
    errors = list(itertools.islice(compiled.validator.iter_errors(arguments), MAX_ERRORS + 1))
    if not errors:
        return []
    more = len(errors) > MAX_ERRORS
    errors = errors[:MAX_ERRORS]
    errors.sort(key=lambda e: [str(p) for p in e.absolute_path])
    lines = [_cut(f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}") for e in errors]
    if more:
        lines.append(message("host.more-errors", count=MAX_ERRORS))
    return lines


def _cut(line: str) -> str:
    return line if len(line) <= MAX_ERROR_CHARS else line[: MAX_ERROR_CHARS - 1] + "…"


def _schema_key(schema: JSONObject) -> bytes:
    return orjson.dumps(schema, option=orjson.OPT_SORT_KEYS)


@functools.lru_cache(maxsize=4096)
def _validator(key: bytes) -> Validator:
    # Compiled once per distinct schema: views are rebuilt often, schemas rarely change.
    schema = orjson.loads(key)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise HostError("HOST-0202", name=schema.get("title", "?"), reason=exc.message) from exc
    validator: Validator = cls(schema)
    return validator


@functools.lru_cache(maxsize=4096)
def _compiled(key: bytes) -> Compiled:
    validator = _validator(key)
    # jsonschema picks the draft from ``$schema``; the direct check knows Draft 2020-12 only.
    default = validator.__class__ is jsonschema.Draft202012Validator
    return Compiled(validator, plain_check(orjson.loads(key)) if default else None)
