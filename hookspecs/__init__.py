"""The host contract: hookspecs, shared value types and host services.

A host that wants PTC Plus (or any plugin written against this contract)
registers :mod:`hookspecs.specs` with a pluggy ``PluginManager`` named
:data:`PROJECT_NAME` and loads plugins from the entry-point group
:data:`ENTRY_POINT_GROUP`. :mod:`hookspecs.reference` is a complete host.
"""

from __future__ import annotations

from hookspecs.markers import ENTRY_POINT_GROUP, PROJECT_NAME, hookimpl, hookspec
from hookspecs.services import (
    HostServices,
    SpillStore,
    TokenCounter,
    ToolContext,
    ToolDefinition,
    ToolFailure,
    ToolHandler,
)
from hookspecs.types import (
    AgentRef,
    CommandReceipt,
    CommandRequest,
    CommandSpec,
    CompactionInfo,
    Concurrency,
    ContextMessage,
    JSONObject,
    JSONValue,
    PromptContext,
    PromptSection,
    ReceiptStatus,
    Refusal,
    ResultAnnotation,
    ResultStatus,
    SessionInfo,
    SessionRecord,
    SkillSpec,
    StepInfo,
    ToolCall,
    ToolError,
    ToolResult,
    ToolSpec,
    TurnSummary,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "PROJECT_NAME",
    "AgentRef",
    "CommandReceipt",
    "CommandRequest",
    "CommandSpec",
    "CompactionInfo",
    "Concurrency",
    "ContextMessage",
    "HostServices",
    "JSONObject",
    "JSONValue",
    "PromptContext",
    "PromptSection",
    "ReceiptStatus",
    "Refusal",
    "ResultAnnotation",
    "ResultStatus",
    "SessionInfo",
    "SessionRecord",
    "SkillSpec",
    "SpillStore",
    "StepInfo",
    "TokenCounter",
    "ToolCall",
    "ToolContext",
    "ToolDefinition",
    "ToolError",
    "ToolFailure",
    "ToolHandler",
    "ToolResult",
    "ToolSpec",
    "TurnSummary",
    "hookimpl",
    "hookspec",
]
