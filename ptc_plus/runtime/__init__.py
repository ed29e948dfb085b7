"""The ``run_code`` runtime: isolated Python programs that call the host's tools (SPEC §2).

Public surface: :func:`run_code_definition` (the tool a host registers),
:class:`CodeRuntime` (runs programs; close it on unload), :class:`RunLimits`
and :class:`SandboxPolicy` (configuration), :class:`RunOutcome` and
:class:`OutcomeKind` (what a run settles to), :data:`DiscoveryProvider`
(what ``run_code_definition(discovery=...)`` takes). Everything else is private to
the subpackage; ``worker/`` is the code that runs inside the child process.
"""

from __future__ import annotations

from ptc_plus.runtime.discovery import DiscoveryProvider
from ptc_plus.runtime.limits import RunLimits, SandboxPolicy, limits_from_environment, resolve_timeout
from ptc_plus.runtime.outcome import LogEntry, OutcomeKind, RunFailure, RunOutcome
from ptc_plus.runtime.runtime import CodeRuntime
from ptc_plus.runtime.tool import TOOL_NAME, run_code_definition

__all__ = [
    "TOOL_NAME",
    "CodeRuntime",
    "DiscoveryProvider",
    "LogEntry",
    "OutcomeKind",
    "RunFailure",
    "RunLimits",
    "RunOutcome",
    "SandboxPolicy",
    "limits_from_environment",
    "resolve_timeout",
    "run_code_definition",
]
