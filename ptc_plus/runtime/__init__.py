"""The ``run_code`` runtime: isolated Python programs that call the host's tools.

Public surface: :func:`run_code_definition` (the tool a host registers),
:class:`CodeRuntime` (runs programs; close it on unload), :class:`RunLimits`
and :class:`SandboxPolicy` (configuration), :class:`RunOutcome` and
:class:`OutcomeKind` with its row in :data:`OUTCOMES` (what a run settles to), :class:`RunShape` (the one
projection of a settled run, ADR 0122), :data:`DiscoveryProvider`
(what ``run_code_definition(discovery=...)`` takes), :data:`OutputObserver`
(what ``CodeRuntime(observer=...)`` takes, to watch output as it arrives), and what the session needs
besides: the errors it reports, whether the configured executor can confine programs here
(:func:`executor_availability`, :class:`ExecutorName`; ADR 0127) and :func:`scratch_state_dir` (a short-lived
host's state directory, stale ones swept). Discovery served outside a run (``mcp-serve``) takes the bounds and thread
programs' does (:func:`check_discovery_bounds`, :func:`in_discovery_thread`). The REPL kernel (ADR 0081):
:class:`KernelCell` (what ``run_code_definition(kernel_for=...)`` returns per call),
:class:`Recovery`, the journal stores and the ``hidden`` record provenance appends. Other packages import these
names from here, never a module of the subpackage (ADR 0057); ``worker/`` is the
code that runs inside the child process and imports the standard library only.
"""

from __future__ import annotations

from ptc_plus.runtime.code_runtime import CodeRuntime
from ptc_plus.runtime.discovery import DiscoveryProvider, in_discovery_thread
from ptc_plus.runtime.discovery import check_bounds as check_discovery_bounds
from ptc_plus.runtime.errors import DiscoveryRequestTooLarge, InvalidLimits
from ptc_plus.runtime.executor import Availability
from ptc_plus.runtime.executor import availability as executor_availability
from ptc_plus.runtime.kernel import (
    DirectoryStore,
    Hidden,
    Journal,
    JournalStore,
    SessionBusy,
    SessionDirInWorkspace,
    SessionDirRefused,
)
from ptc_plus.runtime.kernel import encode as encode_journal_record
from ptc_plus.runtime.kernel.cells import KernelCell, Recovery
from ptc_plus.runtime.ledger import OutputObserver
from ptc_plus.runtime.outcome import OUTCOMES, LogEntry, OutcomeKind, OutcomeRow, RunFailure, RunOutcome, outcome_kinds
from ptc_plus.runtime.run_limits import ExecutorName, KernelMode, RunLimits, resolve_timeout
from ptc_plus.runtime.run_shape import RunError, RunShape
from ptc_plus.runtime.state_dirs import scratch_state_dir
from ptc_plus.runtime.tool import TOOL_NAME, KernelFor, run_code_definition
from ptc_plus.sandbox_policy import SandboxPolicy

__all__ = [
    "OUTCOMES",
    "TOOL_NAME",
    "Availability",
    "CodeRuntime",
    "DirectoryStore",
    "DiscoveryProvider",
    "DiscoveryRequestTooLarge",
    "ExecutorName",
    "Hidden",
    "InvalidLimits",
    "Journal",
    "JournalStore",
    "KernelCell",
    "KernelFor",
    "KernelMode",
    "LogEntry",
    "OutcomeKind",
    "OutcomeRow",
    "OutputObserver",
    "Recovery",
    "RunError",
    "RunFailure",
    "RunLimits",
    "RunOutcome",
    "RunShape",
    "SandboxPolicy",
    "SessionBusy",
    "SessionDirInWorkspace",
    "SessionDirRefused",
    "check_discovery_bounds",
    "encode_journal_record",
    "executor_availability",
    "in_discovery_thread",
    "outcome_kinds",
    "resolve_timeout",
    "run_code_definition",
    "scratch_state_dir",
]
