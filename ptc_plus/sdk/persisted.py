"""Rendered tools (and an SDK text) as bytes for the disk cache, and the digest input of specs (ADR 0078).

The payload is a versioned orjson document. Type expressions, declarations and parameters repeat
across a catalog (``str``, an ``id`` argument, a shared result type), so each distinct one is
written once in a table and tools refer to it by position; decoding builds each once and shares
the (frozen, immutable) value among the tools holding it. That halves the payload and makes
loading 10,000 tools several times faster than structuring every nested value anew.
"""

from __future__ import annotations

import gc
from collections.abc import Sequence
from typing import Any

import attrs
import orjson

from hookspecs.types import ToolSpec
from ptc_plus.sdk.declarations import TypeDecl, TypeExpr
from ptc_plus.sdk.stub import Parameter, RenderedTool

TOOLS_FORMAT = 1
"""Version of the payload :func:`encode_tools` writes; :func:`decode_tools` accepts only this one."""


def spec_inputs(specs: Sequence[ToolSpec]) -> bytes | None:
    """Everything rendering reads of ``specs``, in their order, as bytes (``None``: not plain JSON data).

    Schemas keep their key order, which the rendering follows.
    """
    # The enum itself: orjson writes its value, and ``.value`` is a slow descriptor at 10,000 specs.
    rows = [[s.source, s.name, s.description, s.input_schema, s.output_schema, s.concurrency] for s in specs]
    try:
        return orjson.dumps(rows)
    except TypeError:
        return None


@attrs.frozen(kw_only=True)
class Persisted:
    """What :func:`decode_tools` gives back: the tools, the SDK text and per-tool texts, as stored."""

    tools: tuple[RenderedTool, ...]
    text: str | None = None
    texts: tuple[str, ...] | None = None


class _Table:
    def __init__(self) -> None:
        self.rows: list[list[Any]] = []
        self._seen: dict[object, int] = {}

    def add(self, value: object, row: list[Any]) -> int:
        found = self._seen.get(value)
        if found is None:
            found = self._seen[value] = len(self.rows)
            self.rows.append(row)
        return found


def encode_tools(tools: Sequence[RenderedTool], text: str | None = None, texts: Sequence[str] | None = None) -> bytes:
    """``tools``, an SDK ``text`` rendered from them and one text per tool (each if any) as a payload."""
    exprs, decls, params = _Table(), _Table(), _Table()

    def expr(value: TypeExpr) -> int:
        return exprs.add(value, [value.text, sorted(value.refs), list(value.members)])

    rows = []
    for tool in tools:
        parameters = [params.add(p, [p.name, p.identifier, p.required, expr(p.type), p.note]) for p in tool.parameters]
        types = [decls.add(d, [d.name, d.text, sorted(d.refs)]) for d in tool.types]
        result = expr(tool.result)
        rows.append([tool.name, tool.function, tool.source, parameters, tool.extra_arguments, result, types, tool.stub])
    document = {
        "version": TOOLS_FORMAT,
        "text": text,
        "texts": None if texts is None else list(texts),
        "exprs": exprs.rows,
        "decls": decls.rows,
        "params": params.rows,
        "tools": rows,
    }
    return orjson.dumps(document)


def decode_tools(payload: bytes) -> Persisted | None:
    """What :func:`encode_tools` wrote, or ``None`` if ``payload`` is not one of this format."""
    paused = gc.isenabled()
    if paused:  # tens of thousands of small acyclic objects: the collector would only walk them again
        gc.disable()
    try:
        raw: Any = orjson.loads(payload)
        if not isinstance(raw, dict) or raw.get("version") != TOOLS_FORMAT:
            return None
        text, texts = raw["text"], raw["texts"]
        if text is not None and not isinstance(text, str):
            return None
        if texts is not None and (len(texts) != len(raw["tools"]) or not all(isinstance(t, str) for t in texts)):
            return None
        exprs = [TypeExpr(text=t, refs=frozenset(r), members=tuple(m)) for t, r, m in raw["exprs"]]
        decls = [TypeDecl(name=n, text=t, refs=frozenset(r)) for n, t, r in raw["decls"]]
        params = [
            Parameter(name=n, identifier=i, required=q, type=exprs[e], note=note) for n, i, q, e, note in raw["params"]
        ]
        tools = tuple(
            RenderedTool(
                name=name,
                function=function,
                source=source,
                parameters=tuple(params[p] for p in parameters),
                extra_arguments=extra,
                result=exprs[result],
                types=tuple(decls[d] for d in types),
                stub=stub,
            )
            for name, function, source, parameters, extra, result, types, stub in raw["tools"]
        )
        if not all(_well_typed(t) for t in tools):
            return None
        return Persisted(tools=tools, text=text, texts=None if texts is None else tuple(texts))
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, IndexError):
        return None
    finally:
        if paused:
            gc.enable()


def _well_typed(tool: RenderedTool) -> bool:
    # A damaged entry that still parses must not hand out non-strings where the renderer promises text.
    return (
        isinstance(tool.name, str)
        and isinstance(tool.function, str)
        and isinstance(tool.source, str)
        and isinstance(tool.stub, str)
        and isinstance(tool.result.text, str)
        and (tool.extra_arguments is None or isinstance(tool.extra_arguments, str))
    )
