"""The direct check of plain input schemas gives jsonschema's verdict, and validation its messages (ADR 0123)."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hookspecs.reference import registry
from hookspecs.reference.plain_schema import plain_check
from hookspecs.types import ToolSpec

TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")
NAMES = ("a", "b", "n", "text")

values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from([0.0, 1.0, -2.0, 1.5, float("inf"), float("nan")])
    | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from((*NAMES, "zz")), inner, max_size=4),
    max_leaves=8,
)


def _schemas(depth: int) -> st.SearchStrategy[Any]:
    leaf = st.fixed_dictionaries({}, optional={"type": st.sampled_from(TYPES), "description": st.text(max_size=5)})
    if depth == 0:
        return leaf | st.just(True)
    return leaf | st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(TYPES),
            "properties": st.dictionaries(st.sampled_from(NAMES), _schemas(depth - 1), max_size=3),
            "required": st.lists(st.sampled_from(NAMES), max_size=3, unique=True),
            "additionalProperties": st.booleans(),
            "title": st.text(max_size=5),
        },
    )


@settings(max_examples=600, deadline=None)
@given(schema=_schemas(2), instance=values)
def test_the_direct_check_is_jsonschemas_verdict(schema: Any, instance: Any) -> None:
    check = plain_check(schema)
    assert check is not None  # every generated schema is in the covered grammar: never a skipped comparison
    assert check(instance) is jsonschema.Draft202012Validator(schema).is_valid(instance)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "integer", "minimum": 0},
        {"type": ["string", "null"]},
        {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"},
        {"type": "object", "properties": {"a": {"enum": [1]}}},
        {"type": "object", "patternProperties": {"^x": {}}},
        {"type": "object", "additionalProperties": {"type": "string"}},
        False,
    ],
)
def test_a_schema_outside_the_grammar_is_left_to_jsonschema(schema: Any) -> None:
    assert plain_check(schema) is None


@settings(max_examples=200, deadline=None)
@given(schema=_schemas(2), instance=st.dictionaries(st.sampled_from((*NAMES, "zz")), values, max_size=4))
def test_validation_errors_are_the_same_with_and_without_the_direct_check(schema: Any, instance: Any) -> None:
    spec = ToolSpec(name="t", description="t", input_schema=schema if isinstance(schema, dict) else {})
    compiled = registry._compiled(registry._schema_key(spec.input_schema))
    assert compiled.plain is not None
    without = registry.Compiled(compiled.validator, None)
    assert registry.validation_errors(spec, instance, compiled) == registry.validation_errors(spec, instance, without)
