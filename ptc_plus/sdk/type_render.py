"""JSON Schema → Python type expressions, creating named ``TypedDict`` declarations on the way.

One :class:`TypeRenderer` serves one tool (its input and output documents).
Objects with declared properties become named types: from ``$ref`` targets
(named after the definition), from ``title`` or from their position
(``<Tool><Property>``). Everything is visited in a canonical order, so the
same schema always gives the same names and the same text.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ptc_plus.sdk.declarations import Field, TypeDecl, TypeExpr, describe, typed_dict
from ptc_plus.sdk.literals import clean_text, literal_value
from ptc_plus.sdk.naming import pascal_case
from ptc_plus.sdk.schema import (
    TYPE_ORDER,
    Document,
    is_object_schema,
    properties,
    ref_name,
    required_names,
    schema_types,
)

ANY = TypeExpr(text="Any")
MAX_DEPTH = 48

_SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}


def union(parts: list[TypeExpr]) -> TypeExpr:
    """``A | B``: duplicates dropped (first kept), ``None`` last, ``Any`` absorbs everything."""
    seen: dict[str, frozenset[str]] = {}
    for part in parts:
        for piece in part.members or (part.text,):
            seen.setdefault(piece, part.refs)
    if not seen or "Any" in seen:
        return ANY
    ordered = [k for k in seen if k != "None"] + (["None"] if "None" in seen else [])
    if len(ordered) == 1:
        return TypeExpr(text=ordered[0], refs=seen[ordered[0]])
    refs = frozenset().union(*(seen[k] for k in ordered))
    return TypeExpr(text=" | ".join(ordered), refs=refs, members=tuple(ordered))


class TypeRenderer:
    """Renders the schemas of one tool; collects the named types it needs in :attr:`decls`."""

    def __init__(self, *, tool_pascal: str, qualifier: str = "") -> None:
        self.tool_pascal = tool_pascal
        self.qualifier = qualifier
        self.decls: dict[str, TypeDecl] = {}
        self._reserved: set[str] = set()
        self._by_ref: dict[tuple[str, str], str] = {}
        self._inline_refs: set[tuple[str, str]] = set()

    # -- names ---------------------------------------------------------------
    def _candidates(self, base: str) -> Iterator[str]:
        base = self.qualifier + base
        qualified = self.qualifier + self.tool_pascal + base[len(self.qualifier) :]
        first = [base] if base.startswith(self.qualifier + self.tool_pascal) else [base, qualified]
        yield from first
        for n in range(2, 10_000):
            yield f"{first[-1]}{n}"

    def reserve(self, base: str) -> str:
        """Claim a fresh type name derived from ``base``."""
        for name in self._candidates(base):
            if name not in self._reserved:
                self._reserved.add(name)
                return name
        raise AssertionError("unreachable: 10,000 candidate names")

    def _claim_inline(self, base: str, decl_of: Any) -> str:
        """Name an inline object: reuse an identical declaration, else take a fresh name."""
        for name in self._candidates(base):
            existing = self.decls.get(name)
            if existing is not None:
                if existing.text == decl_of(name).text:
                    return name
                continue
            if name not in self._reserved:
                self._reserved.add(name)
                self.decls[name] = decl_of(name)
                return name
        raise AssertionError("unreachable: 10,000 candidate names")

    # -- expressions ---------------------------------------------------------
    def expr(self, schema: Any, doc: Document, hint: str, depth: int = 0) -> TypeExpr:
        """The type expression for ``schema``; ``hint`` names objects found inside it."""
        if schema is True or (isinstance(schema, Mapping) and not schema):
            return ANY
        if schema is False:
            return TypeExpr(text="Never")
        if not isinstance(schema, Mapping) or depth > MAX_DEPTH:
            return ANY
        if isinstance(schema.get("$ref"), str):
            return self._ref(schema["$ref"], doc, hint, depth)
        if "const" in schema:
            return self._literals([schema["const"]], schema, doc, hint, depth)
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            return self._literals(schema["enum"], schema, doc, hint, depth)
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list) and schema[key]:
                variants = [self.expr(v, doc, f"{hint}Option{i + 1}", depth + 1) for i, v in enumerate(schema[key])]
                if "null" in schema_types(schema):
                    variants.append(TypeExpr(text="None"))
                return union(variants)
        if isinstance(schema.get("allOf"), list) and schema["allOf"]:
            return self._all_of(schema, doc, hint, depth)
        if is_object_schema(schema):
            return self.object(schema, doc, hint, depth)
        return self._by_type(schema, doc, hint, depth)

    def _by_type(self, schema: Mapping[str, Any], doc: Document, hint: str, depth: int) -> TypeExpr:
        types = schema_types(schema)
        if not types:
            if isinstance(schema.get("items"), Mapping | bool) or "prefixItems" in schema:
                types = ["array"]
            elif "additionalProperties" in schema:
                types = ["object"]
            else:
                return ANY
        parts: list[TypeExpr] = []
        for name in types:
            if name == "array":
                parts.append(self._array(schema, doc, hint, depth))
            elif name == "object":
                parts.append(self._mapping(schema, doc, hint, depth))
            else:
                parts.append(TypeExpr(text=_SCALARS[name]))
        return union(parts)

    def _array(self, schema: Mapping[str, Any], doc: Document, hint: str, depth: int) -> TypeExpr:
        prefix = schema.get("prefixItems")
        if prefix is None and isinstance(schema.get("items"), list):
            prefix = schema["items"]  # draft-04 tuple form
        if isinstance(prefix, list) and prefix and schema.get("items", schema.get("additionalItems")) is False:
            members = [self.expr(s, doc, f"{hint}Item{i + 1}", depth + 1) for i, s in enumerate(prefix)]
            return TypeExpr(text=f"tuple[{', '.join(m.text for m in members)}]", refs=_refs(members))
        items = schema.get("items")
        item = self.expr(items, doc, f"{hint}Item", depth + 1) if isinstance(items, Mapping | bool) else ANY
        return TypeExpr(text=f"list[{item.text}]", refs=item.refs)

    def _mapping(self, schema: Mapping[str, Any], doc: Document, hint: str, depth: int) -> TypeExpr:
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping) or extra is False:
            value = self.expr(extra, doc, f"{hint}Value", depth + 1)
            return TypeExpr(text=f"dict[str, {value.text}]", refs=value.refs)
        return TypeExpr(text="dict[str, Any]")

    def _literals(self, values: list[Any], schema: Mapping[str, Any], doc: Document, hint: str, depth: int) -> TypeExpr:
        rendered: list[str] = []
        for value in values:
            text = literal_value(value)
            if text is None:
                # Floats, arrays and objects cannot sit in Literal[...]: fall back to the base type.
                stripped = {k: v for k, v in schema.items() if k not in {"enum", "const"}}
                if not schema_types(stripped):
                    stripped["type"] = sorted({_json_type(v) for v in values}, key=TYPE_ORDER.index)
                return self.expr(stripped, doc, hint, depth + 1)
            if text not in rendered:
                rendered.append(text)
        literal = TypeExpr(text=f"Literal[{', '.join(t for t in rendered if t != 'None')}]")
        parts = [literal] if any(t != "None" for t in rendered) else []
        if "None" in rendered or ("null" in schema_types(schema) and "None" not in rendered):
            parts.append(TypeExpr(text="None"))
        return union(parts)

    def _ref(self, ref: str, doc: Document, hint: str, depth: int) -> TypeExpr:
        resolved = doc.resolve(ref)
        if resolved is None:
            return ANY
        pointer, target = resolved
        key = (doc.role, pointer)
        if key in self._by_ref:
            name = self._by_ref[key]
            return TypeExpr(text=name, refs=frozenset({name}))
        if is_object_schema(target) and "$ref" not in target:
            base = pascal_case(ref_name(pointer)) if pointer else self.tool_pascal + doc.role.capitalize()
            name = self.reserve(base)
            self._by_ref[key] = name
            self.decls[name] = self._declaration(name, target, doc, name, depth)
            return TypeExpr(text=name, refs=frozenset({name}))
        if key in self._inline_refs:
            return ANY  # a cycle through non-object schemas cannot be named: stop here
        self._inline_refs.add(key)
        try:
            return self.expr(target, doc, hint, depth + 1)
        finally:
            self._inline_refs.discard(key)

    def named_root(self, schema: Mapping[str, Any], doc: Document, base: str) -> TypeExpr:
        """Name the document's root object up front, so ``{"$ref": "#"}`` inside it reuses the name."""
        name = self.reserve(base)
        self._by_ref[(doc.role, "")] = name
        self.decls[name] = self._declaration(name, schema, doc, name, 0)
        return TypeExpr(text=name, refs=frozenset({name}))

    def _all_of(self, schema: Mapping[str, Any], doc: Document, hint: str, depth: int) -> TypeExpr:
        parts = [p for p in schema["allOf"] if p is not True and p != {}]
        siblings = {k: v for k, v in schema.items() if k != "allOf"}
        if len(parts) == 1 and not set(siblings) - {"description", "title", "default", "examples"}:
            return self.expr(parts[0], doc, hint, depth + 1)
        merged: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
        for part in [*parts, siblings]:
            resolved = self._resolve_chain(part, doc)
            if not isinstance(resolved, Mapping):
                return ANY
            if not (is_object_schema(resolved) or resolved.keys() <= {"required", "description", "title", "type"}):
                return ANY
            for key, value in properties(resolved).items():
                merged["properties"].setdefault(key, value)
            merged["required"].extend(required_names(resolved))
        if not merged["properties"]:
            return TypeExpr(text="dict[str, Any]")
        for key in ("title", "description"):
            if key in schema:
                merged[key] = schema[key]
        return self.object(merged, doc, hint, depth)

    def _resolve_chain(self, schema: Any, doc: Document) -> Any:
        for _ in range(16):
            if not (isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str)):
                return schema
            resolved = doc.resolve(schema["$ref"])
            if resolved is None:
                return None
            schema = resolved[1]
        return None

    # -- objects -------------------------------------------------------------
    def object(self, schema: Mapping[str, Any], doc: Document, hint: str, depth: int) -> TypeExpr:
        """A named ``TypedDict`` for an object schema with properties."""
        title = schema.get("title")
        base = pascal_case(title) if isinstance(title, str) and title.strip() else hint
        fields = self.fields(schema, doc, base, depth)
        extra = self._extra(schema, doc, base, depth)
        description = clean_text(schema["description"]) if isinstance(schema.get("description"), str) else ""
        name = self._claim_inline(base, lambda n: typed_dict(n, description, fields, extra))
        return TypeExpr(text=name, refs=frozenset({name}))

    def _declaration(self, name: str, schema: Mapping[str, Any], doc: Document, hint: str, depth: int) -> TypeDecl:
        fields = self.fields(schema, doc, hint, depth)
        description = clean_text(schema["description"]) if isinstance(schema.get("description"), str) else ""
        return typed_dict(name, description, fields, self._extra(schema, doc, hint, depth))

    def fields(self, schema: Mapping[str, Any], doc: Document, hint: str, depth: int) -> list[Field]:
        """The object's properties as fields: required first, each group sorted by name."""
        props = properties(schema)
        required = set(required_names(schema))
        result: list[Field] = []
        for key in sorted(props, key=lambda k: (k not in required, k)):
            sub = props[key]
            result.append(
                Field(
                    name=key,
                    type=self.expr(sub, doc, hint + pascal_case(key), depth + 1),
                    required=key in required,
                    note=describe(sub),
                )
            )
        return result

    def _extra(self, schema: Mapping[str, Any], doc: Document, hint: str, depth: int) -> TypeExpr | None:
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping) and extra:
            return self.expr(extra, doc, f"{hint}Value", depth + 1)
        return ANY if extra is True else None


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _refs(parts: list[TypeExpr]) -> frozenset[str]:
    return frozenset().union(*(p.refs for p in parts))
