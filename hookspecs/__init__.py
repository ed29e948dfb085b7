"""The host contract: hookspecs, shared value types and host services.

A host that wants PTC Plus (or any plugin written against this contract)
registers :mod:`hookspecs.specs` with a pluggy ``PluginManager`` named
:data:`PROJECT_NAME` and loads plugins from the entry-point group
:data:`ENTRY_POINT_GROUP`. :mod:`hookspecs.reference` is a complete host.
Host tools that touch the workspace while a program may be racing them use
:mod:`hookspecs.workspace_files` (paths resolved beneath the workspace on
the opened descriptors; symlinks, ``..`` and non-regular files refused).
"""

from __future__ import annotations

from hookspecs import workspace_files
from hookspecs.children import ChildAgents, ChildRequest, ChildResult, child_agents_of
from hookspecs.markers import ENTRY_POINT_GROUP, PROJECT_NAME, hookimpl, hookspec
from hookspecs.services import (
    PRESENTATION_TRUNCATED,
    SPILL_HANDLE,
    HostServices,
    SpillStore,
    TokenCounter,
    ToolContext,
    ToolDefinition,
    ToolFailure,
    ToolHandler,
    tool,
)
from hookspecs.specs import CONTRACT_VERSION
from hookspecs.types import (
    DEFAULT_SKILL_LOADER,
    AgentRef,
    CommandReceipt,
    CommandRequest,
    CommandSpec,
    CompactionInfo,
    Concurrency,
    ContextMessage,
    FamilyMember,
    FamilySettlement,
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
from hookspecs.workspace_files import (
    DirectoryEntry,
    EntryKind,
    NotADirectory,
    NotARegularFile,
    OutsideWorkspace,
    PathNotFound,
    SymlinkRefused,
    WorkspaceFile,
    WorkspacePathError,
)

__all__ = [
    "CONTRACT_VERSION",
    "DEFAULT_SKILL_LOADER",
    "ENTRY_POINT_GROUP",
    "PRESENTATION_TRUNCATED",
    "PROJECT_NAME",
    "SPILL_HANDLE",
    "AgentRef",
    "ChildAgents",
    "ChildRequest",
    "ChildResult",
    "CommandReceipt",
    "CommandRequest",
    "CommandSpec",
    "CompactionInfo",
    "Concurrency",
    "ContextMessage",
    "DirectoryEntry",
    "EntryKind",
    "FamilyMember",
    "FamilySettlement",
    "HostServices",
    "JSONObject",
    "JSONValue",
    "NotADirectory",
    "NotARegularFile",
    "OutsideWorkspace",
    "PathNotFound",
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
    "SymlinkRefused",
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
    "WorkspaceFile",
    "WorkspacePathError",
    "child_agents_of",
    "hookimpl",
    "hookspec",
    "tool",
    "workspace_files",
]
