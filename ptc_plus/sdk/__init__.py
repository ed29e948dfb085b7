"""SDK projection: JSON Schema tool contracts → Python declarations (SPEC §3).

The text only *describes* the tools; the host still validates every call.
"""

from __future__ import annotations

from ptc_plus.sdk.declarations import TypeDecl, TypeExpr
from ptc_plus.sdk.module import Sdk, assemble, distinct_types, module_text, render_sdk, settle
from ptc_plus.sdk.naming import is_identifier, to_identifier, unique_identifiers
from ptc_plus.sdk.stub import Parameter, RenderedTool, render_tool

__all__ = [
    "Parameter",
    "RenderedTool",
    "Sdk",
    "TypeDecl",
    "TypeExpr",
    "assemble",
    "distinct_types",
    "is_identifier",
    "module_text",
    "render_sdk",
    "render_tool",
    "settle",
    "to_identifier",
    "unique_identifiers",
]
