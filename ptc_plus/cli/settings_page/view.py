"""What the page shows, gathered with the functions ``config show`` and ``capabilities plan`` use."""

from __future__ import annotations

from pathlib import Path

import attrs

from hookspecs import TokenCounter
from ptc_plus.capabilities import Catalog
from ptc_plus.cli.settings_page.sessions import SessionRow, workspace_sessions
from ptc_plus.cli.workspace_plan import new_session_plan
from ptc_plus.config import (
    ConfigFile,
    ConfigIssue,
    EffectiveKey,
    Scope,
    combine,
    effective_keys,
    inspect_config,
    read_layer,
    user_config_file,
)
from ptc_plus.config import workspace_config_file as workspace_file
from ptc_plus.plan import CapabilityPlan, reason_text
from ptc_plus.session import plan_lines

SHOWN_SECTIONS = ("management.", "capabilities.", "statistics.", "context.")
"""The keys the page shows: the switch, baseline and budget, each choice, the statistics, the context budgets."""


@attrs.frozen(kw_only=True)
class KeyRow:
    """One key: what each file sets (``None``: it does not set it) and the value in force with its source."""

    key: str
    workspace: EffectiveKey | None
    user: EffectiveKey | None
    effective: EffectiveKey


@attrs.frozen(kw_only=True)
class PlanRow:
    identity: str
    disclosure: str | None
    reason: str
    overage: bool


@attrs.frozen(kw_only=True)
class SettingsView:
    """Everything one rendering of the page shows, in one language."""

    workspace: Path
    files: tuple[ConfigFile, ...]
    keys: tuple[KeyRow, ...]
    problems: tuple[ConfigIssue, ...]
    summary: tuple[str, ...]
    """The ``/capabilities`` report's summary lines: plan, budget and overage, statistics state."""
    plan: tuple[PlanRow, ...]
    statistics: str
    unit: str
    catalog: Catalog
    """The workspace's catalog the plan was computed over (the edit forms list and search it)."""
    counter: TokenCounter
    computed: CapabilityPlan | None = None
    """The plan itself (its entries' statistics for the bars, its budget and overage)."""
    sessions: tuple[SessionRow, ...] = ()
    """The workspace's live and recent sessions, each with its pending diff against ``computed``."""


def gather(workspace: Path, lang: str) -> SettingsView:
    """The page's content for ``workspace`` now (both files read afresh, the plan computed afresh)."""
    report = inspect_config(workspace)
    user = _file_keys(user_config_file(), Scope.USER)
    local = _file_keys(workspace_file(workspace), Scope.WORKSPACE)
    rows = tuple(
        KeyRow(key=key.key, workspace=local.get(key.key), user=user.get(key.key), effective=key)
        for key in report.keys
        if key.key.startswith(SHOWN_SECTIONS)
    )
    computed = new_session_plan(workspace)
    plan, unit = computed.plan, computed.counter.unit
    lines = plan_lines(plan, unit, lang)
    return SettingsView(
        workspace=workspace,
        files=report.files,
        keys=rows,
        problems=report.problems,
        summary=tuple(lines[: len(lines) - len(plan.entries)]),
        plan=_plan_rows(plan, lang),
        statistics=plan.statistics,
        unit=unit,
        catalog=computed.catalog,
        counter=computed.counter,
        computed=plan,
        sessions=workspace_sessions(workspace, plan, lang),
    )


def _file_keys(path: Path, scope: Scope) -> dict[str, EffectiveKey]:
    """The keys ``path`` alone sets, as :func:`effective_keys` reports them (defaults left out)."""
    layer = read_layer(path, tighten_only=scope is Scope.WORKSPACE)
    if layer is None:
        return {}
    keys = effective_keys(combine([layer]), {layer.file: scope.value})
    return {key.key: key for key in keys if key.source == scope.value}


def _plan_rows(plan: CapabilityPlan, lang: str) -> tuple[PlanRow, ...]:
    return tuple(
        PlanRow(
            identity=entry.identity,
            disclosure=entry.disclosure.value if entry.disclosure is not None else None,
            reason=reason_text(entry, lang),
            overage=entry.overage,
        )
        for entry in plan.entries
    )
