"""The host contract: hookspecs, shared value types and host services.

A host that wants PTC Plus (or any plugin written against this contract)
registers :mod:`hookspecs.specs` with a pluggy ``PluginManager`` named
:data:`PROJECT_NAME` and loads plugins from the entry-point group
:data:`ENTRY_POINT_GROUP`. :mod:`hookspecs.reference` is a complete host.
Host tools that touch the workspace while a program may be racing them use
:mod:`hookspecs.workspace_files` (paths resolved beneath the workspace on
the opened descriptors; symlinks, ``..`` and non-regular files refused).

The face is lazy (issue 32, ADR 0115): each name is imported from its module
the first time it is looked up, so ``import hookspecs.i18n`` or
``hookspecs.markers`` (what a plugin needs to register its hooks) does not
import the services, the value types and :mod:`jsonschema`'s neighbours too.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names as the type checker sees them; at run time :func:`__getattr__` imports them
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
        TurnStart,
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

_FACE: dict[str, str] = {
    "ChildAgents": "hookspecs.children",
    "ChildRequest": "hookspecs.children",
    "ChildResult": "hookspecs.children",
    "child_agents_of": "hookspecs.children",
    "ENTRY_POINT_GROUP": "hookspecs.markers",
    "PROJECT_NAME": "hookspecs.markers",
    "hookimpl": "hookspecs.markers",
    "hookspec": "hookspecs.markers",
    "HostServices": "hookspecs.services",
    "PRESENTATION_TRUNCATED": "hookspecs.services",
    "SPILL_HANDLE": "hookspecs.services",
    "SpillStore": "hookspecs.services",
    "TokenCounter": "hookspecs.services",
    "ToolContext": "hookspecs.services",
    "ToolDefinition": "hookspecs.services",
    "ToolFailure": "hookspecs.services",
    "ToolHandler": "hookspecs.services",
    "tool": "hookspecs.services",
    "CONTRACT_VERSION": "hookspecs.specs",
    "AgentRef": "hookspecs.types",
    "CommandReceipt": "hookspecs.types",
    "CommandRequest": "hookspecs.types",
    "CommandSpec": "hookspecs.types",
    "CompactionInfo": "hookspecs.types",
    "Concurrency": "hookspecs.types",
    "ContextMessage": "hookspecs.types",
    "DEFAULT_SKILL_LOADER": "hookspecs.types",
    "FamilyMember": "hookspecs.types",
    "FamilySettlement": "hookspecs.types",
    "JSONObject": "hookspecs.types",
    "JSONValue": "hookspecs.types",
    "PromptContext": "hookspecs.types",
    "PromptSection": "hookspecs.types",
    "ReceiptStatus": "hookspecs.types",
    "Refusal": "hookspecs.types",
    "ResultAnnotation": "hookspecs.types",
    "ResultStatus": "hookspecs.types",
    "SessionInfo": "hookspecs.types",
    "SessionRecord": "hookspecs.types",
    "SkillSpec": "hookspecs.types",
    "StepInfo": "hookspecs.types",
    "TurnStart": "hookspecs.types",
    "ToolCall": "hookspecs.types",
    "ToolError": "hookspecs.types",
    "ToolResult": "hookspecs.types",
    "ToolSpec": "hookspecs.types",
    "TurnSummary": "hookspecs.types",
    "DirectoryEntry": "hookspecs.workspace_files",
    "EntryKind": "hookspecs.workspace_files",
    "NotADirectory": "hookspecs.workspace_files",
    "NotARegularFile": "hookspecs.workspace_files",
    "OutsideWorkspace": "hookspecs.workspace_files",
    "PathNotFound": "hookspecs.workspace_files",
    "SymlinkRefused": "hookspecs.workspace_files",
    "WorkspaceFile": "hookspecs.workspace_files",
    "WorkspacePathError": "hookspecs.workspace_files",
    "workspace_files": "hookspecs.workspace_files",
}
"""Each public name and the module that defines it."""


def __getattr__(name: str) -> Any:
    """Import a public name's module when the name is first asked for (PEP 562) and keep the name here."""
    module = _FACE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    loaded = importlib.import_module(module)
    value = loaded if module == f"{__name__}.{name}" else getattr(loaded, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_FACE})


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
    "TurnStart",
    "TurnSummary",
    "WorkspaceFile",
    "WorkspacePathError",
    "child_agents_of",
    "hookimpl",
    "hookspec",
    "tool",
    "workspace_files",
]
