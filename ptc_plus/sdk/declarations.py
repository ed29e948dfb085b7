"""Text of named declarations: ``TypedDict`` classes and the notes shown beside fields.

A ``TypedDict`` whose keys are all identifiers is written as a class with
attribute docstrings; one with any other key uses the functional form, where
keys are strings and notes become comments.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from ptc_plus.sdk.literals import clean_text, docstring, json_text, one_line
from ptc_plus.sdk.naming import is_identifier

INDENT = "    "

# Validation keywords worth showing next to a field, in this fixed order.
_CONSTRAINTS = (
    "format",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
)


@attrs.frozen(kw_only=True)
class TypeExpr:
    """A type expression and the generated type names it mentions.

    ``members`` lists the top-level alternatives when the expression is a union.
    """

    text: str
    refs: frozenset[str] = frozenset()
    members: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class TypeDecl:
    """One generated named type: its name, full source text and the names it mentions."""

    name: str
    text: str
    refs: frozenset[str] = frozenset()


@attrs.frozen(kw_only=True)
class Field:
    """One key of a ``TypedDict`` (or one parameter of a stub)."""

    name: str
    type: TypeExpr
    required: bool
    note: str = ""


def describe(schema: Any, *, with_default: bool = True) -> str:
    """The human note for a field: description, default and constraints (may be empty)."""
    if not isinstance(schema, Mapping):
        return ""
    parts: list[str] = []
    description = schema.get("description")
    if isinstance(description, str) and clean_text(description):
        parts.append(clean_text(description))
    extras = [f"{key}={json_text(schema[key])}" for key in _CONSTRAINTS if key in schema]
    if with_default and "default" in schema:
        extras.insert(0, f"default: {json_text(schema['default'])}")
    if schema.get("deprecated") is True:
        extras.append("deprecated")
    if extras:
        parts.append("(" + "; ".join(extras) + ")")
    return " ".join(parts) if len(parts) < 2 or "\n" not in parts[0] else "\n".join(parts)


def _annotation(field: Field) -> str:
    return field.type.text if field.required else f"NotRequired[{field.type.text}]"


def typed_dict(name: str, description: str, fields: Sequence[Field], extra: TypeExpr | None) -> TypeDecl:
    """A ``TypedDict`` declaration. ``extra`` notes the type of undeclared keys, if allowed."""
    refs = frozenset().union(*(f.type.refs for f in fields)) | (extra.refs if extra else frozenset())
    doc = description
    if extra is not None:
        doc = (doc + "\n\n" if doc else "") + f"Other keys may be present: {extra.text}."
    if all(is_identifier(f.name) for f in fields):
        lines = [f"class {name}(TypedDict):"]
        if doc:
            lines.append(docstring(doc, INDENT))
        for field in fields:
            lines.append(f"{INDENT}{field.name}: {_annotation(field)}")
            if field.note:
                lines.append(docstring(field.note, INDENT))
        if len(lines) == 1:
            lines.append(f"{INDENT}pass")
        return TypeDecl(name=name, text="\n".join(lines), refs=refs)
    lines = [f"# {one_line(line)}" for line in doc.split("\n")] if doc else []
    lines.append(f"{name} = TypedDict(")
    lines.append(f"{INDENT}{name!r},")
    lines.append(INDENT + "{")
    for field in fields:
        if field.note:
            lines.extend(f"{INDENT * 2}# {one_line(line)}" for line in field.note.split("\n"))
        annotation = _annotation(field)
        # The functional form evaluates its values at import time: quote forward references.
        value = repr(annotation) if field.type.refs else annotation
        lines.append(f"{INDENT * 2}{field.name!r}: {value},")
    lines.append(INDENT + "},")
    lines.append(")")
    return TypeDecl(name=name, text="\n".join(lines), refs=refs)
