"""``ptc-plus stats``: what the usage statistics say per capability, and ``stats reset``.

The capabilities are the workspace's catalog (the reference host's demo
tools, as ``capabilities plan`` uses), each looked up in the store(s) the
way a new session's plan looks them up (:mod:`ptc_plus.session.provision`):
the workspace scope first, the user-global scope only as the fallback
when the workspace has too few samples. ``--scope`` shows one scope alone.

A store that cannot be read is reported with its own code. A damaged
workspace store costs statistics their whole vote in the plan, so
``stats`` fails on it (exit 1; ``--scope user`` still shows the other
scope); a damaged user-global store only costs the fallback, so the
default view warns and shows the workspace scope.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import attrs
import click

from ptc_plus.capabilities import Catalog
from ptc_plus.cli.capabilities_plan import report_issues
from ptc_plus.cli.invocation import PtcGroup, ptc_command
from ptc_plus.cli.options import json_option, workspace_option
from ptc_plus.cli.output import JSON_VERSION, emit_json, on_terminal, paint, styled, table
from ptc_plus.cli.workspace_plan import workspace_catalog
from ptc_plus.config import LoadedConfig, StatisticsSection, load_config
from ptc_plus.errors import UsageError
from ptc_plus.i18n import message
from ptc_plus.statistics import (
    LearnedShape,
    StatisticsStore,
    StoreView,
    schema_revision_of,
    shape_summary,
    user_store,
    workspace_store,
)

F = TypeVar("F", bound=Callable[..., Any])

WORKSPACE, USER, BOTH = "workspace", "user", "both"
SCOPES = (WORKSPACE, USER)
UNREADABLE = frozenset({"corrupt", "future-version"})

SUFFICIENT, NO_SAMPLE, BELOW_MINIMUM, FALLBACK = "sufficient", "no-sample", "below-minimum", "fallback"
"""Why a row's statistics do or do not vote: enough samples; no eligible family had the capability
available; fewer than ``min_samples``; the workspace had too few and the user-global scope stands in."""


@attrs.frozen(kw_only=True)
class Row:
    """One capability: its numbers in the scope whose statistics the plan would use (``scope``)."""

    identity: str
    available: int
    used: int
    coverage: float | None
    scope: str
    reason: str
    shortfall: int | None = None
    """Under ``fallback``: the workspace's samples (fewer than the minimum)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "identity": self.identity,
            "available": self.available,
            "used": self.used,
            "coverage": self.coverage,
            "scope": self.scope,
            "reason": self.reason,
        }


@attrs.frozen(kw_only=True)
class Numbers:
    available: int
    used: int
    coverage: float | None


def _stores(workspace: Path) -> dict[str, StatisticsStore]:
    return {WORKSPACE: workspace_store(workspace), USER: user_store()}


def _numbers(
    view: StoreView | None, identity: str, contract: tuple[str, str] | None, settings: StatisticsSection
) -> Numbers:
    """``identity`` in ``view`` at ``contract`` (revision, schema revision); ``None``: a capability the
    catalog here does not offer, looked up at the newest revision the store holds for it."""
    if view is None or view.status != "ok":
        return Numbers(available=0, used=0, coverage=None)
    contract = contract or view.latest_revision(identity)
    if contract is None:
        return Numbers(available=0, used=0, coverage=None)
    revision, shape = contract
    found = view.stats(
        identity, revision, schema_revision=shape, window=settings.window, min_samples=settings.min_samples
    )
    return Numbers(available=found.available, used=found.used, coverage=found.coverage)


def _enough(numbers: Numbers, settings: StatisticsSection) -> bool:
    return numbers.coverage is not None and numbers.available >= settings.min_samples


def _own(identity: str, scope: str, numbers: Numbers, settings: StatisticsSection) -> Row:
    if numbers.available == 0 or numbers.coverage is None:
        reason = NO_SAMPLE
    else:
        reason = SUFFICIENT if _enough(numbers, settings) else BELOW_MINIMUM
    return Row(
        identity=identity,
        available=numbers.available,
        used=numbers.used,
        coverage=numbers.coverage,
        scope=scope,
        reason=reason,
    )


def rows(catalog: Catalog, views: dict[str, StoreView | None], scope: str, settings: StatisticsSection) -> list[Row]:
    """One row per managed capability of ``catalog`` and per capability the stores hold samples of
    (a real host's tools recorded here, which the demo catalog lacks), in identity order."""
    contracts: dict[str, tuple[str, str] | None] = {
        c.identity: (c.revision, schema_revision_of(c)) for c in catalog.managed()
    }
    for view in views.values():
        if view is not None and view.status == "ok":
            for identity in view.capabilities():
                contracts.setdefault(identity, None)
    found: list[Row] = []
    for identity in sorted(contracts):
        numbers = {
            name: _numbers(views.get(name), identity, contracts[identity], settings)
            for name in SCOPES
            if scope in (name, BOTH)
        }
        if scope != BOTH:
            found.append(_own(identity, scope, numbers[scope], settings))
            continue
        local, user = numbers[WORKSPACE], numbers[USER]
        if not _enough(local, settings) and _enough(user, settings):
            found.append(
                Row(
                    identity=identity,
                    available=user.available,
                    used=user.used,
                    coverage=user.coverage,
                    scope=USER,
                    reason=FALLBACK,
                    shortfall=local.available,
                )
            )
        else:
            found.append(_own(identity, WORKSPACE, local, settings))
    return found


def _views(stores: dict[str, StatisticsStore], scope: str) -> tuple[dict[str, StoreView | None], list[StoreView]]:
    """The readable views of the scopes asked for, and the unreadable ones that only cost the fallback.

    Raises the store's own problem when a store the answer depends on cannot be read.
    """
    views: dict[str, StoreView | None] = {}
    warnings: list[StoreView] = []
    for name in SCOPES:
        if scope not in (name, BOTH):
            continue
        view = stores[name].read()
        if view.status in UNREADABLE:
            if name == USER and scope == BOTH:
                warnings.append(view)  # as in the plan: the workspace still votes, the fallback does not
                views[name] = None
                continue
            if view.problem is not None:
                raise view.problem
        views[name] = view
    return views, warnings


def _coverage(row: Row) -> str:
    return "—" if row.coverage is None else f"{row.coverage:.0%}"


def _why(row: Row, settings: StatisticsSection) -> str:
    scope = message(f"plan.scope.{row.scope}")
    if row.reason == FALLBACK:
        return message("cli.stats.why.fallback", samples=row.shortfall or 0, min_samples=settings.min_samples)
    if row.reason == BELOW_MINIMUM:
        return message(
            "cli.stats.why.below-minimum", scope=scope, samples=row.available, min_samples=settings.min_samples
        )
    return message(f"cli.stats.why.{row.reason}", scope=scope)


def _store_line(scope: str, store: StatisticsStore, view: StoreView | None) -> str:
    name = message(f"plan.scope.{scope}")
    if view is None or view.status != "ok":
        status = "missing" if view is None or view.status == "missing" else "unreadable"
        return message(f"cli.stats.store.{status}", scope=name, path=str(store.path))
    return message("cli.stats.store.ok", scope=name, path=str(store.path), families=view.families())


def _warn(view: StoreView) -> None:
    problem = view.problem
    if problem is None:
        return
    line = message("cli.stats.fallback-lost", code=problem.code, problem=problem.message())
    click.echo(click.style(line, fg="yellow") if styled(sys.stderr.isatty()) else line, err=True)


def show(workspace: Path, scope: str, as_json: bool) -> int:
    loaded = load_config(workspace)
    settings = loaded.config.statistics
    stores = _stores(workspace)
    views, warnings = _views(stores, scope)
    found = rows(workspace_catalog(workspace), views, scope, settings)
    if as_json:
        emit_json(_document(loaded, stores, views, warnings, scope, found))
        return 0
    report_issues(loaded)
    for view in warnings:
        _warn(view)
    _print(loaded, stores, views, scope, found)
    return 0


def _enabled(loaded: LoadedConfig) -> bool:
    return loaded.config.statistics.enabled and not loaded.statistics_disabled


def _document(
    loaded: LoadedConfig,
    stores: dict[str, StatisticsStore],
    views: dict[str, StoreView | None],
    warnings: Sequence[StoreView],
    scope: str,
    found: Sequence[Row],
) -> dict[str, Any]:
    settings = loaded.config.statistics
    problems = [{"code": v.problem.code, "message": v.problem.message("en")} for v in warnings if v.problem]
    problems += [{"code": issue.code, "message": issue.message("en")} for issue in loaded.issues]
    stored = []
    for name in SCOPES:
        if name in views:
            view = views[name]
            status = "unreadable" if view is None else view.status
            families = view.families() if view is not None and view.status == "ok" else None
            stored.append({"scope": name, "path": str(stores[name].path), "status": status, "families": families})
    return {
        "version": JSON_VERSION,
        "scope": scope,
        "window": settings.window,
        "min_samples": settings.min_samples,
        "enabled": _enabled(loaded),
        "stores": stored,
        "problems": problems,
        "capabilities": [row.to_json() for row in found],
        "learned": [
            {
                "identity": shape.identity,
                "revision": shape.revision,
                "scope": name,
                "results": shape.results,
                "since": shape.since,
                "shape": dict(shape.shape),
            }
            for name, shape in _learned(views)
        ],
    }


def _learned(views: dict[str, StoreView | None]) -> list[tuple[str, LearnedShape]]:
    """Every result shape learned in the scopes read (ADR 0102), workspace first."""
    return [
        (name, shape)
        for name in SCOPES
        if (view := views.get(name)) is not None and view.status == "ok"
        for shape in view.all_learned()
    ]


def _print(
    loaded: LoadedConfig,
    stores: dict[str, StatisticsStore],
    views: dict[str, StoreView | None],
    scope: str,
    found: Sequence[Row],
) -> None:
    settings = loaded.config.statistics
    click.echo(
        paint(
            message(f"cli.stats.title.{scope}", window=settings.window, min_samples=settings.min_samples),
            bold=True,
        )
    )
    for name in SCOPES:
        if name in views:
            click.echo(_store_line(name, stores[name], views[name]))
    if not _enabled(loaded):
        click.echo(message("cli.stats.no-vote"))
    for name, shape in _learned(views):
        click.echo(
            message(
                "cli.stats.learned",
                identity=shape.identity,
                scope=name,
                results=shape.results,
                since=shape.since,
                shape=shape_summary(shape.shape),
            )
        )
    if on_terminal():
        headers = [
            message("cli.column.capability"),
            message("cli.stats.column.available"),
            message("cli.stats.column.used"),
            message("cli.stats.column.coverage"),
            message("cli.stats.column.scope"),
            message("cli.column.why"),
        ]
        cells = [[r.identity, str(r.available), str(r.used), _coverage(r), r.scope, _why(r, settings)] for r in found]
        click.echo(table(headers, cells))
        return
    for row in found:
        click.echo(
            message(
                "cli.stats.row.one" if row.available == 1 else "cli.stats.row.other",
                identity=row.identity,
                used=row.used,
                available=row.available,
                coverage=_coverage(row),
                scope=row.scope,
                why=_why(row, settings),
            )
        )


def reset(workspace: Path, scope: str, yes: bool) -> int:
    store = _stores(workspace)[scope]
    name = message(f"plan.scope.{scope}")
    report_issues(load_config(workspace))  # as every command reading the workspace does: problems come with codes
    if store.read().status == "missing":
        click.echo(message("cli.stats.reset.nothing", scope=name, path=str(store.path)))
        return 0
    if not yes:
        if not sys.stdin.isatty():
            raise UsageError(detail=message("cli.stats.reset.needs-yes"))
        prompt = message("cli.stats.reset.confirm", scope=name, path=str(store.path))
        if not click.confirm(prompt, default=False):
            click.echo(message("cli.stats.reset.kept"))
            return 1
    store.reset()
    click.echo(message("cli.stats.reset.done", scope=name, path=str(store.path)))
    return 0


def _scope_option(default: str, choices: Sequence[str], help_key: str) -> Callable[[F], F]:
    return click.option(
        "--scope",
        type=click.Choice(list(choices)),
        default=default,
        show_default=True,
        help=message(help_key),
    )


def reset_command() -> click.Command:
    @ptc_command("reset", help=message("cli.stats.reset.help"), epilog=message("cli.stats.reset.examples"))
    @workspace_option()
    @_scope_option(WORKSPACE, SCOPES, "cli.stats.reset.scope")
    @click.option("--yes", "-y", is_flag=True, help=message("cli.stats.reset.yes"))
    def reset_(workspace: Path, scope: str, yes: bool) -> int:
        return reset(workspace, scope, yes)

    return reset_


def command() -> click.Command:
    @click.group(
        "stats",
        cls=PtcGroup,
        invoke_without_command=True,
        help=message("cli.stats.help"),
        epilog=message("cli.stats.examples"),
    )
    @workspace_option()
    @_scope_option(BOTH, (WORKSPACE, USER, BOTH), "cli.stats.scope")
    @json_option("cli.stats.json")
    @click.pass_context
    def stats(ctx: click.Context, workspace: Path, scope: str, as_json: bool) -> int:
        if ctx.invoked_subcommand is not None:
            return 0
        return show(workspace, scope, as_json)

    stats.add_command(reset_command())
    return stats
