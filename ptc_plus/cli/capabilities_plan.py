"""``ptc-plus capabilities plan`` and ``ptc-plus capabilities set``: the plan and its editor.

``plan`` shows what a new session in the workspace would get, over the
reference host's demo tools or the tool set ``--tools`` names, computed
exactly as session start computes it (:mod:`ptc_plus.cli.workspace_plan`),
with every config issue (a loosening the workspace file may not make
included). MCP servers' tools come from their ``tools/list`` snapshots, named
with their age in the reasons of the entries they gave; ``--refresh-sources``
starts the servers to list them again (ADR 0097). ``set`` edits the workspace
config file (atomic, comments kept); running and resumed sessions keep their
frozen plans. A malformed identity or value is a usage error; an identity
the current catalog does not offer is saved with a warning (it applies when
the capability appears).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

import click

from ptc_plus.adapters.mcp import ToolsSnapshot, age_text
from ptc_plus.capabilities import KINDS, CapabilityKind, Catalog, CatalogUnavailable
from ptc_plus.cli.invocation import ptc_command, usage_errors
from ptc_plus.cli.options import json_option, tools_option, workspace_option
from ptc_plus.cli.output import JSON_VERSION, emit_json, on_terminal, paint, styled, table
from ptc_plus.cli.workspace_plan import new_session_plan, tools_catalog, workspace_catalog
from ptc_plus.config import (
    INHERIT,
    CapabilityIdentityInvalid,
    Disclosure,
    DisclosureValueInvalid,
    LoadedConfig,
    load_config,
    set_capability,
    unit_server,
)
from ptc_plus.i18n import message
from ptc_plus.plan import CapabilityPlan, PlanEntry, plan_to_json, reason_text
from ptc_plus.session import plan_lines
from ptc_plus.spelling import closest, did_you_mean


def plan_command() -> click.Command:
    @ptc_command(help=message("cli.capabilities.plan.help"), epilog=message("cli.capabilities.plan.examples"))
    @workspace_option()
    @tools_option("cli.capabilities.plan.tools")
    @click.option("--verbose", "-v", is_flag=True, help=message("cli.capabilities.plan.verbose"))
    @click.option("--refresh-sources", is_flag=True, help=message("cli.capabilities.plan.refresh-sources"))
    @json_option("cli.capabilities.plan.json")
    def plan(workspace: Path, tools: str | None, verbose: bool, refresh_sources: bool, as_json: bool) -> int:
        return run_plan(workspace, as_json, verbose=verbose, tools=tools, refresh=refresh_sources)

    return plan


def set_command() -> click.Command:
    @ptc_command("set", help=message("cli.capabilities.set.help"), epilog=message("cli.capabilities.set.examples"))
    @click.argument("identity")
    @click.argument("value", metavar="full|on-demand|off|inherit")
    @tools_option("cli.capabilities.set.tools")
    @workspace_option()
    @json_option("cli.capabilities.set.json")
    def set_(identity: str, value: str, tools: str | None, workspace: Path, as_json: bool) -> int:
        return run_set(workspace, identity, value, as_json, tools=tools)

    return set_


def run_plan(
    workspace: Path, as_json: bool, *, verbose: bool = False, tools: str | None = None, refresh: bool = False
) -> int:
    computed = new_session_plan(workspace, tools_catalog(tools, workspace, refresh=refresh), refresh=refresh)
    loaded, counter, plan = computed.loaded, computed.counter, computed.plan
    listed = computed.provenance
    if as_json:
        document = {
            "version": JSON_VERSION,
            "workspace": str(workspace),
            "config_files": list(loaded.files),
            "issues": [issue.message("en") for issue in loaded.issues],
            "sources": list(computed.notes),
            "token_unit": counter.unit,
            "plan": plan_to_json(plan),
            "reasons": {entry.identity: _why(entry, listed, "en") for entry in plan.entries},
            "snapshots": {
                name: {"taken_at": snapshot.taken_at, "age_s": round(snapshot.age_s(), 3), "tools": len(snapshot.tools)}
                for name, snapshot in sorted(listed.items())
            },
        }
        emit_json(document)
        return 0
    files = ", ".join(loaded.files) or message("cli.capabilities.plan.no-files")
    tool_set = tools or message("cli.capabilities.plan.demo-tools")
    title = message("cli.capabilities.plan.title", workspace=str(workspace), tools=tool_set, files=files)
    click.echo(paint(title, bold=True))
    report_issues(loaded)
    for note in computed.notes:
        click.echo(note, err=True)
    for used in listed.values():
        click.echo(paint(used.provenance(), dim=True), err=True)
    # The /capabilities report's lines: a summary, then exactly one line per entry in plan order.
    lines = plan_lines(plan, counter.unit)
    summary, entry_lines = lines[: len(lines) - len(plan.entries)], lines[len(lines) - len(plan.entries) :]
    for line in summary:
        click.echo(line)
    if verbose:
        _verbose_summary(plan, counter.unit)
    if on_terminal():
        click.echo(_plan_table(plan, counter.unit, verbose, listed))
        return 0
    for entry, line in zip(plan.entries, entry_lines, strict=True):
        source = _snapshot_of(entry.identity, listed)
        click.echo(line if source is None else f"{line} {_snapshot_words(source)}")
        if verbose:
            key = "cli.capabilities.plan.detail-overage" if entry.overage else "cli.capabilities.plan.detail"
            click.echo(message(key, code=str(entry.reason), tokens=entry.cost_tokens, unit=counter.unit))
    return 0


def report_issues(loaded: LoadedConfig) -> None:
    """Each config problem on standard error with its code (the command still answers, as a session would start)."""
    for issue in loaded.issues:
        line = message("cli.capabilities.plan.issue", code=issue.code, issue=issue.message())
        click.echo(click.style(line, fg="yellow") if styled(sys.stderr.isatty()) else line, err=True)


def _verbose_summary(plan: CapabilityPlan, unit: str) -> None:
    """The plan's own terms, for ``--verbose``: the raw statistics state, the overage and a glossary."""
    vote = "" if plan.statistics == "usable" else message("cli.capabilities.plan.no-vote")
    overage = plan.overage_tokens
    click.echo(
        message("cli.capabilities.plan.statistics", state=plan.statistics, vote=vote, overage=overage, unit=unit)
    )
    click.echo(message("cli.capabilities.plan.terms"))


def _snapshot_of(identity: str, listed: Mapping[str, ToolsSnapshot]) -> ToolsSnapshot | None:
    """The snapshot ``identity``'s server was planned from (``mcp:<server>/<tool>``, ``mcp-resources:<server>``)."""
    source, _, member = identity.partition(":")
    if source == KINDS[CapabilityKind.MCP_TOOL].source:
        return listed.get(member.partition("/")[0])
    if source == KINDS[CapabilityKind.MCP_RESOURCES].source:
        return listed.get(member)
    return None


def _snapshot_words(snapshot: ToolsSnapshot, lang: str | None = None) -> str:
    return message(
        "cli.capabilities.plan.from-snapshot", lang, taken_at=snapshot.taken_text(), age=age_text(snapshot.age_s())
    )


def _why(entry: PlanEntry, listed: Mapping[str, ToolsSnapshot], lang: str | None = None) -> str:
    """The entry's reason, and for a server's member the snapshot its tools came from (ADR 0097)."""
    why = reason_text(entry, lang)
    snapshot = _snapshot_of(entry.identity, listed)
    return why if snapshot is None else f"{why} {_snapshot_words(snapshot, lang)}"


def _plan_table(plan: CapabilityPlan, unit: str, verbose: bool, listed: Mapping[str, ToolsSnapshot]) -> str:
    """The entries as a table: off and absent entries dimmed, explicit full beyond the budget in yellow."""
    absent = message("ptc.report.absent")
    headers = [message("cli.column.capability"), message("cli.column.disclosure")]
    if verbose:
        headers += [message("cli.column.reason-code"), message("cli.column.cost", unit=unit)]
    headers.append(message("cli.column.why"))
    rows: list[list[str]] = []
    for entry in plan.entries:
        disclosure = entry.disclosure.value if entry.disclosure is not None else absent
        why = _why(entry, listed)
        if entry.overage:
            why = paint(message("cli.capabilities.plan.over-budget", reason=why), fg="yellow")
        elif entry.disclosure in (None, Disclosure.OFF):
            disclosure = paint(disclosure, dim=True)
        row = [paint(entry.identity, bold=True), disclosure]
        if verbose:
            row += [str(entry.reason), str(entry.cost_tokens)]
        rows.append([*row, why])
    return table(headers, rows)


def run_set(workspace: Path, identity: str, chosen: str, as_json: bool, *, tools: str | None = None) -> int:
    """Edit the workspace file's choice for ``identity``; warn (with the nearest identity) when the catalog of
    ``tools`` (``--tools``; default: the workspace's own tools) and its MCP servers lacks it."""
    with usage_errors(CapabilityIdentityInvalid, DisclosureValueInvalid):
        try:
            result = set_capability(workspace, identity, chosen)
        except CapabilityIdentityInvalid as error:
            # A bare tool name ("write_file") is the commonest slip: name the identity it most likely means.
            suggestion = nearest_identity(workspace, identity, tools)
            raise CapabilityIdentityInvalid(**error.params, suggestion=suggestion) if suggestion else error from None
    unknown = chosen != INHERIT and _unknown(workspace, identity, tools)
    # The edit is done; problems elsewhere in the effective config (the user file, other keys) still decide
    # what a new session gets, so they are shown now rather than discovered at the next session.
    loaded = load_config(workspace)
    if as_json:
        document = {"version": JSON_VERSION, "file": str(result.file), "identity": identity, "value": chosen}
        document |= {"previous": result.previous, "changed": result.changed, "in_catalog": not unknown}
        emit_json({**document, "issues": [issue.message("en") for issue in loaded.issues]})
        return 0
    report_issues(loaded)
    server = unit_server(identity)
    if unknown and server is not None:
        hint = did_you_mean(nearest_identity(workspace, identity, tools))
        click.echo(message("cli.capabilities.set.unknown-server", identity=identity, server=server) + hint, err=True)
    elif unknown:
        hint = did_you_mean(nearest_identity(workspace, identity, tools))
        click.echo(message("cli.capabilities.set.unknown", identity=identity) + hint, err=True)
    inherited = message("cli.capabilities.set.inherited")
    value = inherited if chosen == INHERIT else chosen
    if result.changed:
        previous = result.previous or inherited
        click.echo(
            message(
                "cli.capabilities.set.changed",
                file=str(result.file),
                identity=identity,
                value=value,
                previous=previous,
            )
        )
    else:
        click.echo(message("cli.capabilities.set.unchanged", file=str(result.file), identity=identity, value=value))
    return 0


def _catalog(workspace: Path, tools: str | None) -> Catalog:
    """The catalog of ``tools`` (``--tools``) and the MCP servers, or the workspace's own without it."""
    sourced = tools_catalog(tools, workspace)
    return workspace_catalog(workspace) if sourced is None else sourced.catalog


def nearest_identity(workspace: Path, identity: str, tools: str | None = None) -> str | None:
    """The identity of the workspace's catalog, or the server unit ``mcp:<server>`` of its config, that
    ``identity`` most likely misspells (:func:`~ptc_plus.spelling.closest`; a bare tool name matches the
    identity of the tool so named), or ``None``."""
    servers = load_config(workspace).config.mcp.servers
    server = unit_server(identity)
    if server is not None:
        close = closest(server, list(servers))
        return f"mcp:{close}" if close else None
    known = {f"mcp:{name}": f"mcp:{name}" for name in servers}
    try:
        capabilities = _catalog(workspace, tools).capabilities
    except CatalogUnavailable:
        capabilities = ()
    known |= {c.identity: c.identity for c in capabilities}
    for capability in capabilities:
        known.setdefault(capability.name, capability.identity)
    return closest(identity, known)


def _unknown(workspace: Path, identity: str, tools: str | None = None) -> bool:
    """Whether the workspace's current catalog lacks ``identity`` (unknowable catalog: not reported).

    A server unit ``mcp:<server>`` is no catalog member: it is known when the config defines the server (ADR 0071).
    """
    server = unit_server(identity)
    if server is not None:
        return server not in load_config(workspace).config.mcp.servers
    try:
        catalog = _catalog(workspace, tools)
    except CatalogUnavailable:
        return False
    return catalog.get(identity) is None
