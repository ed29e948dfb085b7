"""Assembling rendered tools into one text: shared types once, stubs grouped per source.

Type names are chosen per tool; when two tools produce different types under
one name, both tools are rendered again with a qualifier (their source, then
their identity digest) until every name means one thing. Equal declarations
are emitted once — and so counted once by whoever meters the text.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence

import attrs

from hookspecs.types import ToolSpec
from ptc_plus.sdk.declarations import TypeDecl
from ptc_plus.sdk.literals import one_line
from ptc_plus.sdk.naming import pascal_case
from ptc_plus.sdk.payload_cache import PayloadCache
from ptc_plus.sdk.persisted import decode_tools, encode_tools, spec_inputs
from ptc_plus.sdk.stub import RenderedTool, render_tool

TYPING_NAMES = ("Any", "Literal", "Never", "NotRequired", "TypedDict")
MODULE_DOC = '"""Typed SDK of the tools this program can call (generated; the host validates every call)."""'
_SEPARATOR = "\n\n\n"
CACHE_ABOVE = 500
"""Tools above which :func:`render_sdk` consults a cache it is given (smaller SDKs render in milliseconds)."""
CACHE_KIND = "sdk"


@attrs.frozen(kw_only=True)
class Sdk:
    """A rendered SDK: its text, the tools in it and the distinct types it declares."""

    text: str
    tools: tuple[RenderedTool, ...]
    types: tuple[TypeDecl, ...]


def qualifier(spec: ToolSpec, level: int) -> str:
    """Prefix for a tool's type names at clash level ``level`` (0: none)."""
    if level == 0:
        return ""
    prefix = pascal_case(spec.source)
    if level == 1:
        return prefix
    digest = hashlib.sha256(f"{spec.source}\0{spec.name}".encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{prefix}X{digest}"


Renderer = Callable[[ToolSpec, int], RenderedTool]


def _default_renderer(spec: ToolSpec, level: int) -> RenderedTool:
    return render_tool(spec, qualifier=qualifier(spec, level))


def settle(specs: Sequence[ToolSpec], render: Renderer = _default_renderer) -> list[RenderedTool]:
    """Render ``specs`` so that no type name has two different declarations."""
    levels = [0] * len(specs)
    for _ in range(3):
        rendered = [render(spec, level) for spec, level in zip(specs, levels, strict=True)]
        owners: dict[str, dict[str, list[int]]] = {}
        for i, tool in enumerate(rendered):
            for decl in tool.types:
                owners.setdefault(decl.name, {}).setdefault(decl.text, []).append(i)
        clashing = {i for by_text in owners.values() if len(by_text) > 1 for ids in by_text.values() for i in ids}
        if not clashing:
            return rendered
        levels = [level + 1 if i in clashing else level for i, level in enumerate(levels)]
    raise AssertionError("type names still clash after qualifying by identity digest")


def distinct_types(tools: Sequence[RenderedTool]) -> tuple[TypeDecl, ...]:
    """Every declaration once, sorted by name (tools must be :func:`settle`-d)."""
    by_name: dict[str, TypeDecl] = {}
    for tool in tools:
        for decl in tool.types:
            by_name.setdefault(decl.name, decl)
    return tuple(by_name[n] for n in sorted(by_name))


def assemble(tools: Sequence[RenderedTool], *, header: bool) -> str:
    """The text of ``tools``: types first, then stubs grouped by source (sources and names sorted).

    With ``header`` the text is a complete module (docstring and imports).
    """
    blocks = [decl.text for decl in distinct_types(tools)]
    by_source: dict[str, list[RenderedTool]] = {}
    for tool in tools:
        by_source.setdefault(tool.source, []).append(tool)
    for source in sorted(by_source):
        # Grouped in one pass: scanning every tool per source was quadratic at catalog scale.
        members = sorted(by_source[source], key=lambda t: (t.name, t.function))
        blocks.append(f"# ── {one_line(source)} ──\n" + _SEPARATOR.join(t.stub for t in members))
    body = _SEPARATOR.join(blocks) + "\n" if blocks else ""
    return module_text(body) if header else body


def module_text(body: str) -> str:
    """``body`` (types and stubs) as a complete module: docstring, imports, then the body."""
    used = [n for n in TYPING_NAMES if re.search(rf"\b{n}\b", body)]
    imports = f"from typing import {', '.join(used)}\n" if used else ""
    head = f"{MODULE_DOC}\n\nfrom __future__ import annotations\n\n{imports}"
    return head + ("\n\n" + body if body else "")


def render_sdk(specs: Sequence[ToolSpec], *, header: bool = True, cache: PayloadCache | None = None) -> Sdk:
    """Render ``specs`` (any order: the output is sorted) into one SDK text.

    With ``cache``, more than :data:`CACHE_ABOVE` tools are looked up by a digest of the specs (and the
    code, through the cache's key) before rendering, and stored after: the SDK is equal either way (ADR 0078).
    """
    ordered = sorted(specs, key=lambda s: (s.source, s.name))
    kind = CACHE_KIND + ("" if header else "-body")
    key = _cache_key(kind, ordered, cache)
    if cache is not None and key is not None:
        payload = cache.load(kind, key)
        found = decode_tools(payload) if payload is not None else None
        if found is not None and found.text is not None and len(found.tools) == len(ordered):
            return Sdk(text=found.text, tools=found.tools, types=distinct_types(found.tools))
    settled = settle(ordered)
    sdk = Sdk(text=assemble(settled, header=header), tools=tuple(settled), types=distinct_types(settled))
    if cache is not None and key is not None:
        cache.store(kind, key, encode_tools(sdk.tools, sdk.text))
    return sdk


def _cache_key(kind: str, specs: Sequence[ToolSpec], cache: PayloadCache | None) -> str | None:
    if cache is None or len(specs) <= CACHE_ABOVE:
        return None
    inputs = spec_inputs(specs)
    return None if inputs is None else cache.key([kind.encode(), inputs])
