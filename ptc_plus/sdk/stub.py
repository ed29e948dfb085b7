"""One tool → one ``async def`` stub plus the named types it needs.

Arguments become keyword-only parameters (required first, then optional,
each group sorted by name); an optional parameter is written ``= ...`` —
omitting it omits the key, and the tool applies its own default, which the
docstring states. Names that are not identifiers are mapped and the real
JSON name is shown beside them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import attrs

from hookspecs.types import ToolSpec
from ptc_plus.sdk.declarations import INDENT, TypeDecl, TypeExpr, describe
from ptc_plus.sdk.literals import clean_text, docstring
from ptc_plus.sdk.naming import pascal_case, to_identifier, unique_identifiers
from ptc_plus.sdk.schema import Document, is_object_schema, properties, required_names
from ptc_plus.sdk.type_render import ANY, TypeRenderer

# Wrap the signature one parameter per line beyond this width.
SIGNATURE_WIDTH = 100

LEARNED_MARK = "Learned result shape"
"""Starts the docstring paragraph of a tool whose result type was learned from its results (ADR 0102): a reader
of the contract (the evaluation's policy) finds a stated shape by this text; :attr:`RenderedTool.learned` says
the same to code."""


_STUB = re.compile(r"^async def ([A-Za-z_][A-Za-z0-9_]*)\(", re.MULTILINE)


def learned_functions(text: str) -> frozenset[str]:
    """The functions of a delivered contract text (a catalog message, an inspect answer) whose result shape is
    stated as learned (:data:`LEARNED_MARK` in their docstring): a reader that sees only the text, like the
    evaluation's policy, knows their results' keys as it would from a published output schema."""
    starts = list(_STUB.finditer(text))
    found = set()
    for index, match in enumerate(starts):
        end = starts[index + 1].start() if index + 1 < len(starts) else len(text)
        if LEARNED_MARK + " (" in text[match.end() : end]:
            found.add(match.group(1))
    return frozenset(found)


@attrs.frozen(kw_only=True)
class LearnedResult:
    """A result shape learned from a tool's results (the statistics store's, ADR 0102): a JSON Schema of types
    and field names, how many results it was learned from and since which day (``2026-12-01``)."""

    schema: Mapping[str, Any]
    results: int
    since: str

    @property
    def json_text(self) -> bool:
        """The results are strings holding JSON (MCP text content): the program parses them itself."""
        return self.schema.get("contentMediaType") == "application/json" and "contentSchema" in self.schema

    @property
    def output_schema(self) -> Mapping[str, Any]:
        """The schema of the value a program works with (of the parsed JSON text, for :attr:`json_text`)."""
        inner = self.schema.get("contentSchema") if self.json_text else self.schema
        return inner if isinstance(inner, Mapping) else {}


@attrs.frozen(kw_only=True)
class Parameter:
    """One argument: its real JSON name, its Python name and its type."""

    name: str
    identifier: str
    required: bool
    type: TypeExpr
    note: str = ""


@attrs.frozen(kw_only=True)
class RenderedTool:
    """A tool's rendered declaration: stub text and the types it mentions (sorted by name)."""

    name: str
    function: str
    source: str
    parameters: tuple[Parameter, ...]
    extra_arguments: str | None
    result: TypeExpr
    types: tuple[TypeDecl, ...]
    stub: str
    learned: LearnedResult | None = None
    """The learned shape ``result`` renders (``None``: the contract's own output schema, or ``Any``)."""

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parameters if p.required)

    @property
    def argument_names(self) -> dict[str, str]:
        """Python parameter name → JSON argument name, for turning a program's keywords back into arguments.

        Keywords not in the map pass through unchanged (they go to ``extra_arguments`` or fail host validation).
        """
        return {p.identifier: p.name for p in self.parameters}


@attrs.frozen(kw_only=True)
class _Arguments:
    props: dict[str, Any]
    required: set[str]
    extra: Any
    description: str


def _argument_shape(schema: Any, doc: Document) -> _Arguments:
    """The root object of an input schema, following ``$ref`` and merging ``allOf``/``anyOf``."""
    for _ in range(16):
        if isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str):
            resolved = doc.resolve(schema["$ref"])
            schema = resolved[1] if resolved else {}
    if not isinstance(schema, Mapping):
        return _Arguments(props={}, required=set(), extra=None, description="")
    props = dict(properties(schema))
    required = set(required_names(schema))
    for key, all_required in (("allOf", True), ("anyOf", False), ("oneOf", False)):
        parts = (
            [p for p in schema.get(key) or [] if isinstance(p, Mapping)] if isinstance(schema.get(key), list) else []
        )
        shapes = [_argument_shape(p, doc) for p in parts]
        for shape in shapes:
            for name, sub in shape.props.items():
                props.setdefault(name, sub)
        if shapes and all_required:
            required |= set().union(*(s.required for s in shapes))
        elif shapes:
            required |= set.intersection(*(s.required for s in shapes))
    extra = schema.get("additionalProperties")
    if not props and extra is None and not is_object_schema(schema) and schema.get("type") not in (None, "object"):
        extra = True  # a non-object root: nothing to name, accept whatever the host validates
    description = clean_text(schema["description"]) if isinstance(schema.get("description"), str) else ""
    return _Arguments(
        props={k: props[k] for k in sorted(props)}, required=required, extra=extra, description=description
    )


def render_tool(spec: ToolSpec, *, qualifier: str = "", learned: LearnedResult | None = None) -> RenderedTool:
    """Render one tool. ``qualifier`` prefixes every generated type name (used to settle clashes).

    ``learned``: a result shape learned from the tool's results, rendered (as a ``TypedDict`` for an object)
    where the contract states no output schema, and marked as learned (:data:`LEARNED_MARK`); ignored when
    the contract has its own."""
    if spec.output_schema is not None:
        learned = None
    tool_pascal = pascal_case(spec.name)
    renderer = TypeRenderer(tool_pascal=tool_pascal, qualifier=qualifier)
    in_doc = Document(root=spec.input_schema, role="arguments")
    shape = _argument_shape(spec.input_schema, in_doc)
    names = sorted(set(shape.props) | shape.required, key=lambda n: (n not in shape.required, n))
    identifiers = unique_identifiers(names)
    parameters = tuple(
        Parameter(
            name=name,
            identifier=identifiers[name],
            required=name in shape.required,
            type=renderer.expr(shape.props[name], in_doc, tool_pascal + pascal_case(name))
            if name in shape.props
            else ANY,
            note=describe(shape.props.get(name)),
        )
        for name in names
    )
    extra_name: str | None = None
    extra_type = ANY
    if shape.extra is not None and shape.extra is not False:
        extra_name = next(n for n in ("kwargs", "extra", "extra_arguments", "_kwargs") if n not in identifiers.values())
        if isinstance(shape.extra, Mapping) and shape.extra:
            extra_type = renderer.expr(shape.extra, in_doc, tool_pascal + "Extra")
    result = _result(spec, renderer, tool_pascal, learned)
    function = to_identifier(spec.name)
    stub = _stub_text(spec, function, parameters, extra_name, extra_type, result, shape.description, learned)
    return RenderedTool(
        name=spec.name,
        function=function,
        source=spec.source,
        parameters=parameters,
        extra_arguments=extra_name,
        result=result,
        types=tuple(renderer.decls[n] for n in sorted(renderer.decls)),
        stub=stub,
        learned=learned,
    )


def _result(spec: ToolSpec, renderer: TypeRenderer, tool_pascal: str, learned: LearnedResult | None) -> TypeExpr:
    schema = spec.output_schema if learned is None else dict(learned.output_schema)
    if schema is None:
        return ANY
    out_doc = Document(root=schema, role="result")
    if is_object_schema(schema) and "$ref" not in schema:
        title = schema.get("title")
        base = pascal_case(title) if isinstance(title, str) and title.strip() else tool_pascal + "Result"
        return renderer.named_root(schema, out_doc, base)
    return renderer.expr(schema, out_doc, tool_pascal + "Result")


def _learned_note(result: TypeExpr, learned: LearnedResult) -> str:
    returns = f"json.loads(result) is {result.text}" if learned.json_text else f"returns {result.text}"
    return (
        f"{LEARNED_MARK} ({learned.results} results since {learned.since}; the tool publishes no output schema): "
        f"{returns}. A key may still be missing or new."
    )


def _signature(function: str, params: list[str], result: str) -> str:
    flat = f"async def {function}({', '.join(params)}) -> {result}:"
    if len(flat) <= SIGNATURE_WIDTH or not params:
        return flat
    inner = "".join(f"{INDENT}{p},\n" for p in params)
    return f"async def {function}(\n{inner}) -> {result}:"


def _stub_text(
    spec: ToolSpec,
    function: str,
    parameters: tuple[Parameter, ...],
    extra_name: str | None,
    extra_type: TypeExpr,
    result: TypeExpr,
    arguments_note: str,
    learned: LearnedResult | None = None,
) -> str:
    params: list[str] = ["*"] if parameters else []
    params += [f"{p.identifier}: {p.type.text}" + ("" if p.required else " = ...") for p in parameters]
    if extra_name is not None:
        params.append(f"**{extra_name}: {extra_type.text}")
    lines = [_signature(function, params, "str" if learned is not None and learned.json_text else result.text)]
    doc_parts: list[str] = []
    description = clean_text(spec.description)
    if description:
        doc_parts.append(description)
    if learned is not None:
        doc_parts.append(_learned_note(result, learned))
    if function != spec.name:
        doc_parts.append(f"Real tool name: {spec.name!r} (call it as tools[{spec.name!r}]).")
    if arguments_note and arguments_note != description:
        doc_parts.append(arguments_note)
    arg_lines = [_arg_line(p) for p in parameters if p.note or p.identifier != p.name]
    if extra_name is not None:
        arg_lines.append(f"**{extra_name}: further arguments, passed through as given.")
    if arg_lines:
        doc_parts.append("Args:\n" + "\n".join(arg_lines))
    if doc_parts:
        lines.append(docstring("\n\n".join(doc_parts), INDENT))
    else:
        lines.append(f"{INDENT}...")
    return "\n".join(lines)


def _arg_line(param: Parameter) -> str:
    head = param.identifier if param.identifier == param.name else f"{param.identifier} (JSON name {param.name!r})"
    note = param.note.replace("\n", "\n" + INDENT * 2)
    return f"{INDENT}{head}: {note}" if note else f"{INDENT}{head}"
