"""SDK projection: JSON Schema tool contracts → Python declarations.

The text only *describes* the tools; the host still validates every call.
"""

from __future__ import annotations

from ptc_plus.sdk.declarations import TypeDecl, TypeExpr
from ptc_plus.sdk.errors import (
    InvalidToolsFile,
    ToolFactoryResult,
    ToolModuleNotFound,
    ToolNotImplemented,
    ToolSetNotRecognized,
    ToolSetUnavailable,
)
from ptc_plus.sdk.literals import one_line
from ptc_plus.sdk.module import Sdk, assemble, distinct_types, module_text, qualifier, render_sdk, settle
from ptc_plus.sdk.naming import is_identifier, to_identifier, unique_identifiers, words
from ptc_plus.sdk.payload_cache import PayloadCache
from ptc_plus.sdk.persisted import Persisted, decode_tools, encode_tools, spec_inputs
from ptc_plus.sdk.stub import LEARNED_MARK, LearnedResult, Parameter, RenderedTool, learned_functions, render_tool
from ptc_plus.sdk.tool_source import DEMO_TOOL_SET, ToolSet, ToolSetKind, load_tool_set
from ptc_plus.sdk.tools_file import load_tool_specs

__all__ = [
    "DEMO_TOOL_SET",
    "LEARNED_MARK",
    "InvalidToolsFile",
    "LearnedResult",
    "Parameter",
    "PayloadCache",
    "Persisted",
    "RenderedTool",
    "Sdk",
    "ToolFactoryResult",
    "ToolModuleNotFound",
    "ToolNotImplemented",
    "ToolSet",
    "ToolSetKind",
    "ToolSetNotRecognized",
    "ToolSetUnavailable",
    "TypeDecl",
    "TypeExpr",
    "assemble",
    "decode_tools",
    "distinct_types",
    "encode_tools",
    "is_identifier",
    "learned_functions",
    "load_tool_set",
    "load_tool_specs",
    "module_text",
    "one_line",
    "qualifier",
    "render_sdk",
    "render_tool",
    "settle",
    "spec_inputs",
    "to_identifier",
    "unique_identifiers",
    "words",
]
