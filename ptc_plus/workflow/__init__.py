"""Workflow scripts: a restricted orchestration script starting child agents through the host (ADR 0116).

The face of the unit: :class:`WorkflowDesk` (what the plugin keeps per host that lends child agents:
the ``run_workflow`` tool, ``/workflow``, background runs), :class:`WorkflowEngine` and
:class:`WorkflowRun` (start a checked run, read its progress, wait for its :class:`WorkflowReport`),
:class:`WorkflowCaps`, :class:`StopReason`, :func:`check_script`, the errors, and
:data:`TOOL_NAME`. A script runs as a program of the code runtime (:mod:`ptc_plus.runtime`), so the
confinement of ``run_code`` is its boundary; :mod:`.rules` is the language context on top.
"""

from __future__ import annotations

from ptc_plus.workflow.caps import WorkflowCaps, default_concurrency
from ptc_plus.workflow.check import CheckedScript, check_script
from ptc_plus.workflow.desk import WorkflowDesk, workflow_commands
from ptc_plus.workflow.engine import StopReason, WorkflowEngine, WorkflowReport, WorkflowRun
from ptc_plus.workflow.errors import (
    CapsAboveCeiling,
    InvalidArguments,
    ScriptRefused,
    ScriptSyntax,
    UnknownProvider,
    WorkflowClosed,
    WorkflowError,
)
from ptc_plus.workflow.progress import RECORD_KIND, ProgressEvent
from ptc_plus.workflow.ralph_tool import RALPH_TOOL, asks_for_ralph, turn_asks_for_ralph
from ptc_plus.workflow.tool import TOOL_NAME

OWN_TOOLS = (TOOL_NAME, RALPH_TOOL)
"""The plugin's own tools of this unit (never capabilities of a plan, offered natively when offered at all)."""

__all__ = [
    "OWN_TOOLS",
    "RALPH_TOOL",
    "RECORD_KIND",
    "TOOL_NAME",
    "CapsAboveCeiling",
    "CheckedScript",
    "InvalidArguments",
    "ProgressEvent",
    "ScriptRefused",
    "ScriptSyntax",
    "StopReason",
    "UnknownProvider",
    "WorkflowCaps",
    "WorkflowClosed",
    "WorkflowDesk",
    "WorkflowEngine",
    "WorkflowError",
    "WorkflowReport",
    "WorkflowRun",
    "asks_for_ralph",
    "check_script",
    "default_concurrency",
    "turn_asks_for_ralph",
    "workflow_commands",
]
