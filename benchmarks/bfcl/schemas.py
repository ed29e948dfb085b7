"""BFCL function docs as tool contracts, and the distractor pool that grows a task's catalog to 200 and 2,000.

A doc's ``parameters`` becomes the input schema, its ``response`` (when
given) the output schema, with BFCL's type names mapped to JSON Schema the
way BFCL maps them for OpenAPI (``dict`` → ``object``, ``float`` →
``number``, ``tuple`` → ``array``, ``any`` → ``string``; Java and
JavaScript names too). A type BFCL has no mapping for is dropped (any value).

Distractors, in this order, skipping names already taken: the multi-turn
docs of the classes the task does not involve (BFCL's class order), the
other multi-turn doc files (web search, memory), then the *function docs*
of the single-turn files, in the order of :data:`SINGLE_TURN_FILES`. Only
their function docs are read, never their questions: the single-turn
queries stay held out (issue 27). Names are made tool-safe as BFCL does for
OpenAI (``math.factorial`` → ``math_factorial``).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

import jsonschema
from jsonschema.protocols import Validator

from hookspecs.types import JSONObject, JSONValue, ToolSpec

from .backends import CLASS_MODULES
from .wheel import Wheel

DOC_FILES: Mapping[str, str] = {
    "GorillaFileSystem": "gorilla_file_system.json",
    "MathAPI": "math_api.json",
    "MessageAPI": "message_api.json",
    "TwitterAPI": "posting_api.json",
    "TicketAPI": "ticket_api.json",
    "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json",
    "VehicleControlAPI": "vehicle_control.json",
}
"""BFCL's ``MULTI_TURN_FUNC_DOC_FILE_MAPPING`` for the eight classes of the multi-turn categories."""
OTHER_MULTI_TURN_DOCS = ("web_search.json", "memory_kv.json", "memory_vector.json", "memory_rec_sum.json")
SINGLE_TURN_FILES = (
    *(
        f"BFCL_v4_{name}.json"
        for name in (
            "simple_python",
            "multiple",
            "parallel",
            "parallel_multiple",
            "live_simple",
            "live_multiple",
            "live_parallel",
            "live_parallel_multiple",
            "irrelevance",
            "live_irrelevance",
            "live_relevance",
            "simple_java",
            "simple_javascript",
        )
    ),
    *(
        f"unused_datasets/question/BFCL_v4_{name}.json"
        for name in ("exec_simple", "exec_multiple", "exec_parallel", "exec_parallel_multiple", "rest", "sql")
    ),
)
"""The single-turn files (under the wheel's data directory) whose ``function`` lists feed the distractor pool.

The retired executable categories (``unused_datasets``) come last: without them the pool falls short of
2,000 distinct names."""

TYPES = {
    "integer": "integer",
    "number": "number",
    "float": "number",
    "string": "string",
    "boolean": "boolean",
    "bool": "boolean",
    "array": "array",
    "list": "array",
    "dict": "object",
    "object": "object",
    "tuple": "array",
    "any": "string",
    "byte": "integer",
    "short": "integer",
    "long": "integer",
    "double": "number",
    "char": "string",
    "ArrayList": "array",
    "Array": "array",
    "HashMap": "object",
    "Hashtable": "object",
    "Queue": "array",
    "Stack": "array",
    "Any": "string",
    "String": "string",
    "Bigint": "integer",
}
"""BFCL's ``GORILLA_TO_OPENAPI`` (``bfcl_eval/constants/type_mappings.py``)."""

_SCHEMA_KEYS = ("description", "enum", "default", "required", "format", "minimum", "maximum")


def json_schema(doc: Any) -> JSONObject:
    """One BFCL schema node as JSON Schema (recursively through ``properties`` and ``items``)."""
    if not isinstance(doc, Mapping):
        return {}
    schema: dict[str, JSONValue] = {}
    kind = doc.get("type")
    if isinstance(kind, str) and kind in TYPES:
        schema["type"] = TYPES[kind]
    for key in _SCHEMA_KEYS:
        if key in doc and not (key == "required" and not isinstance(doc[key], list)):
            value: JSONValue = doc[key]
            schema[key] = value
    properties = doc.get("properties")
    if isinstance(properties, Mapping):
        schema["properties"] = {str(name): json_schema(inner) for name, inner in properties.items()}
    if "items" in doc:
        schema["items"] = json_schema(doc["items"])
    if schema.get("type") == "string" and "default" in schema and not isinstance(schema["default"], str):
        del schema["default"]  # a default BFCL wrote in another type (``None``) is not a string default
    return schema


def tool_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)


def tool_spec(doc: Mapping[str, Any], source: str) -> ToolSpec:
    """A function doc as a contract: name, description, ``parameters`` → input, ``response`` → output schema."""
    input_schema = dict(json_schema(doc.get("parameters", {})))
    input_schema["type"] = "object"
    response = doc.get("response")
    output = json_schema(response) if isinstance(response, Mapping) else None
    return ToolSpec(
        name=tool_name(str(doc["name"])),
        description=str(doc.get("description", "")),
        input_schema=input_schema,
        output_schema=output or None,
        source=source,
    )


@functools.lru_cache(maxsize=4096)
def _validator(schema: str) -> Validator:
    loaded = json.loads(schema)
    jsonschema.Draft202012Validator.check_schema(loaded)
    return jsonschema.Draft202012Validator(loaded)


def argument_errors(spec: ToolSpec, arguments: JSONObject) -> list[str]:
    """Why ``arguments`` do not validate against ``spec``'s input schema (as the host validates them)."""
    checker = _validator(json.dumps(spec.input_schema, sort_keys=True))
    return [error.message for error in checker.iter_errors(arguments)]


@functools.cache
def class_docs(wheel: Wheel, name: str) -> tuple[Mapping[str, Any], ...]:
    """The function docs of class ``name`` (``TwitterAPI``), in the doc file's order."""
    return tuple(wheel.lines(f"multi_turn_func_doc/{DOC_FILES[name]}"))


def class_specs(wheel: Wheel, name: str) -> list[ToolSpec]:
    return [tool_spec(doc, f"bfcl:{name}") for doc in class_docs(wheel, name)]


@functools.cache
def _ordered_pool(wheel: Wheel) -> tuple[tuple[str, ToolSpec], ...]:
    """Every distractor candidate with the class it belongs to ("" for the non-class docs), in pool order."""
    pool: list[tuple[str, ToolSpec]] = []
    for name in CLASS_MODULES:
        pool += [(name, spec) for spec in class_specs(wheel, name)]
    for file in OTHER_MULTI_TURN_DOCS:
        source = "bfcl:" + file.removesuffix(".json")
        pool += [("", tool_spec(doc, source)) for doc in wheel.lines(f"multi_turn_func_doc/{file}")]
    for file in SINGLE_TURN_FILES:
        source = "bfcl:" + file.rsplit("/", 1)[-1].removeprefix("BFCL_v4_").removesuffix(".json")
        for entry in wheel.lines(file):
            # Only the function docs: the entry's ``question`` is never read (held out).
            pool += [("", tool_spec(doc, source)) for doc in entry.get("function", [])]
    return tuple(pool)


def distractors(wheel: Wheel, involved: Iterable[str], taken: Iterable[str], n: int) -> list[ToolSpec]:
    """``n`` schema-only tools for a task of the ``involved`` classes, none named as ``taken``.

    :raises ValueError: the pool has fewer than ``n`` distinct names left (the caller asked for too big a catalog).
    """
    own = set(involved)
    used = set(taken)
    found: list[ToolSpec] = []
    for owner, spec in _ordered_pool(wheel):
        if len(found) == n:
            break
        if owner in own or spec.name in used:
            continue
        used.add(spec.name)
        found.append(spec)
    if len(found) < n:
        raise ValueError(f"the BFCL distractor pool holds {len(found)} more tools, not {n}")
    return found
