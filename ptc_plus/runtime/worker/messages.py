"""Program-facing messages inside the child, from templates the host sends in ``boot``.

The child cannot read the host's locale catalogs (it imports nothing but the
standard library), so ``boot`` carries the templates it needs, already in the
host's language. An absent template falls back to the English text here.
"""

from __future__ import annotations

from typing import Any

_FALLBACK = {
    "runtime.worker.unknown_tool": "No tool named {name!r} in tools{matches}",
    "runtime.worker.close_matches": "; close matches: {matches}",
    "runtime.worker.tool_off": "tools.{name} is off in this session's capability plan: a program cannot call it",
    "runtime.worker.positional": "tools.{name}() takes keyword arguments only: tools.{name}(key=value, ...)",
    "runtime.worker.bad_argument": "Arguments of tools.{name}() are not lossless JSON: {detail}",
    "runtime.worker.read_only": "The tools namespace is read-only",
    "runtime.worker.tool_failed": "Tool {name} failed ({code}): {message}",
    "runtime.worker.yield": "'yield' is not allowed at the top level of a program",
    "runtime.worker.bad_discovery_argument": "Arguments of capabilities.{name}() are not lossless JSON: {detail}",
    "runtime.worker.discovery_failed": "capabilities.{name}() failed ({code}): {message}",
    "runtime.worker.unknown_method": "capabilities has no {name!r}; its methods are: {methods}",
    "runtime.worker.capabilities_read_only": "The capabilities object is read-only",
    "runtime.worker.reply_undecodable": (
        "The reply ({size} bytes) could not be decoded within the program's memory limit; ask for less at a time"
    ),
    "runtime.worker.omitted": "[… {count} characters omitted …]",
    "runtime.worker.spill_unavailable": (
        "spill.read() is unavailable: this session has no spill store, so no result was previewed"
    ),
    "runtime.worker.spill_no_attribute": "spill has no {name!r}; its only method is read(handle, offset, limit)",
    "runtime.worker.spill_read_only": "The spill object is read-only",
    "runtime.worker.resources_unavailable": "resources is unavailable: this session has no MCP server with resources",
    "runtime.worker.resources_no_attribute": (
        "resources has no {name!r}; its methods are read(uri, server=None) and list(server)"
    ),
    "runtime.worker.resources_read_only": "The resources object is read-only",
    "runtime.worker.no_cell": "no cell is running: a task of an earlier cell cannot reach the host any more",
    "runtime.worker.tool_turned_off": (
        "tools.{name} was turned off by capability refresh #{sequence}; a reference held from an earlier "
        "cell does not reach it"
    ),
    "runtime.worker.tool_unavailable": (
        "tools.{name} is not in this cell's tools (turned off or removed); a reference held from an earlier "
        "cell does not reach it"
    ),
    "runtime.worker.binding_failed": "the binding {name!r} failed while it was loaded into the cell: {error}",
    "runtime.worker.repl_bad_name": "a state name must be a non-empty string of at most {limit} characters",
    "runtime.worker.repl_no_attribute": "repl has no {name!r}; its methods are save, restore, list and delete",
    "runtime.worker.repl_read_only": "The repl object is read-only",
    "runtime.worker.value_changed": "the value changed while it was being sent (a thread of the program modified it)",
}

_templates: dict[str, str] = dict(_FALLBACK)


def install(templates: dict[str, Any]) -> None:
    """Use the host's templates (unknown keys are ignored)."""
    for key, text in templates.items():
        if key in _FALLBACK and isinstance(text, str):
            _templates[key] = text


def text(key: str, **params: Any) -> str:
    return _templates[key].format(**params)


def template_keys() -> tuple[str, ...]:
    """Every key the child uses (the host sends exactly these)."""
    return tuple(_FALLBACK)
