"""Property tests: generated JSON Schemas always render to parseable, byte-stable SDK text."""

from __future__ import annotations

import ast
import keyword
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hookspecs.types import ToolSpec
from ptc_plus.sdk import render_sdk, render_tool

# Property and definition names: identifiers, keywords, punctuation, digits, CJK, quotes, NUL.
NAMES = st.one_of(
    st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True),
    st.sampled_from([*keyword.kwlist[:8], "odd-name", "2fa", "a.b", "x y", "名称", "ﬁle", '"q"', "\\", "a\x00b", "__"]),
    st.text(min_size=1, max_size=6),
)
TEXT = st.text(max_size=30)
JSON_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False, allow_infinity=False), TEXT
)
DEF_NAMES = ["Node", "Item", "odd def", "Any", "list"]


def _leaf() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.sampled_from(
            [{"type": t} for t in ("string", "integer", "number", "boolean", "null", "object", "array")]
            + [{}, True, False]
        ),
        st.builds(lambda v: {"enum": v}, st.lists(JSON_SCALARS, min_size=1, max_size=4)),
        st.builds(lambda v: {"const": v}, JSON_SCALARS),
        st.builds(lambda n: {"$ref": f"#/$defs/{n}"}, st.sampled_from([*DEF_NAMES, "missing"])),
        st.builds(lambda d, v: {"type": "string", "description": d, "default": v}, TEXT, JSON_SCALARS),
    )


def _objects(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    def build(props: dict[str, Any], required: list[str], title: str | None, extra: Any) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "object", "properties": props, "required": required}
        if title is not None:
            schema["title"] = title
        if extra is not None:
            schema["additionalProperties"] = extra
        return schema

    props = st.dictionaries(NAMES, children, max_size=4)
    return props.flatmap(
        lambda p: st.builds(
            build,
            st.just(p),
            st.lists(st.sampled_from(sorted(p)) if p else st.nothing(), max_size=len(p), unique=True)
            | NAMES.map(lambda n: [n]),
            st.none() | NAMES,
            st.none() | st.booleans() | children,
        )
    )


SCHEMAS = st.recursive(
    _leaf(),
    lambda children: st.one_of(
        _objects(children),
        st.builds(lambda i: {"type": "array", "items": i}, children),
        st.builds(lambda v: {"anyOf": v}, st.lists(children, min_size=1, max_size=3)),
        st.builds(lambda v: {"oneOf": v}, st.lists(children, min_size=1, max_size=3)),
        st.builds(lambda v: {"allOf": v}, st.lists(children, min_size=1, max_size=2)),
        st.builds(lambda t: {"type": t}, st.lists(st.sampled_from(["string", "null", "integer", "array"]), min_size=1)),
        st.builds(lambda d, s: {**s, "description": d} if isinstance(s, dict) else s, TEXT, children),
    ),
    max_leaves=12,
)


@st.composite
def tool_specs(draw: st.DrawFn) -> ToolSpec:
    root = draw(_objects(SCHEMAS))
    defs = draw(st.dictionaries(st.sampled_from(DEF_NAMES), SCHEMAS, max_size=3))
    if defs:
        root["$defs"] = defs
    output = draw(st.none() | SCHEMAS.filter(lambda s: isinstance(s, dict)))
    return ToolSpec(
        name=draw(NAMES), description=draw(TEXT), input_schema=root, output_schema=output, source=draw(NAMES)
    )


def _shuffled(value: Any, rng: random.Random) -> Any:
    """The same JSON with every object's keys in another order (lists keep theirs: order is meaning)."""
    if isinstance(value, dict):
        keys = list(value)
        rng.shuffle(keys)
        return {k: _shuffled(value[k], rng) for k in keys}
    if isinstance(value, list):
        return [_shuffled(v, rng) for v in value]
    return value


PROPERTY_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY_SETTINGS
@given(tool_specs())
def test_rendered_sdk_parses_and_compiles(spec: ToolSpec) -> None:
    text = render_sdk([spec]).text
    compile(ast.parse(text), "<sdk>", "exec")


@PROPERTY_SETTINGS
@given(tool_specs(), st.randoms(use_true_random=False))
def test_render_is_byte_stable_under_key_reordering(spec: ToolSpec, rng: random.Random) -> None:
    first = render_sdk([spec]).text
    again = render_sdk([spec]).text
    reordered = ToolSpec(
        name=spec.name,
        description=spec.description,
        input_schema=_shuffled(spec.input_schema, rng),
        output_schema=_shuffled(spec.output_schema, rng),
        source=spec.source,
    )
    assert first == again
    assert render_sdk([reordered]).text == first


@PROPERTY_SETTINGS
@given(tool_specs())
def test_every_required_parameter_is_named(spec: ToolSpec) -> None:
    tool = render_tool(spec)
    module = ast.parse(render_sdk([spec]).text)
    stubs = [n for n in module.body if isinstance(n, ast.AsyncFunctionDef)]
    assert len(stubs) == 1
    keyword_only = {a.arg for a in stubs[0].args.kwonlyargs}
    required = {r for r in spec.input_schema.get("required", []) if isinstance(r, str)}
    by_name = {p.name: p for p in tool.parameters}
    for name in required:
        assert by_name[name].required
        assert by_name[name].identifier in keyword_only
        if by_name[name].identifier != name:
            assert repr(name) in ast.get_docstring(stubs[0], clean=False)  # type: ignore[operator]
