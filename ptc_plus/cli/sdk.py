"""``ptc-plus sdk --tools FILE.json [--budget N]``: print the rendered SDK; its cost goes to stderr.

A tools file that cannot be read or is not a list of tool definitions, and a
budget below 1, are usage errors (exit 2).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ptc_plus import discovery
from ptc_plus.capabilities import build_catalog, default_cache
from ptc_plus.cli.invocation import ptc_command
from ptc_plus.cli.options import integer, json_option, read_tool_set, tools_option
from ptc_plus.cli.output import JSON_VERSION, emit_json, plural
from ptc_plus.discovery import build_snapshot
from ptc_plus.i18n import message
from ptc_plus.sdk import module_text, render_sdk


def command() -> click.Command:
    @ptc_command(help=message("cli.sdk.help"), epilog=message("cli.sdk.examples"))
    @tools_option("cli.sdk.tools", required=True)
    @click.option("--budget", type=integer(1), default=None, metavar="N", help=message("cli.sdk.budget"))
    @json_option("cli.sdk.json")
    def sdk(tools: str, budget: int | None, as_json: bool) -> int:
        # A factory is called with a workspace: the SDK's is the current directory's.
        specs = list(read_tool_set(tools, Path.cwd()).specs)
        snapshot = build_snapshot(build_catalog(tools=specs))
        not_expanded: list[dict[str, object]] = []
        if budget is None:
            rendered = render_sdk(specs, cache=default_cache())  # a known catalog renders once (ADR 0078)
            text, expanded, types = rendered.text, len(rendered.tools), len(rendered.types)
        else:
            # The budget bounds the delivered contracts; the module header comes on top.
            identities = [c.identity for c in snapshot.catalog.capabilities]
            delivered = discovery.inspect(snapshot, identities, budget=budget)
            text = module_text(delivered["text"])
            expanded = len(delivered["expanded"])
            types = text.count("(TypedDict)") + text.count("= TypedDict(")
            not_expanded = list(delivered["not_expanded"])
        unit = snapshot.counter.unit
        cost = snapshot.counter.count(text)
        if as_json:
            document = {"version": JSON_VERSION, "text": text, "tokens": cost, "unit": unit, "tools": expanded}
            emit_json({**document, "types": types, "not_expanded": not_expanded})
            return 0
        for ref in not_expanded:
            line = message(
                "cli.sdk.not_expanded", reason=ref["reason"], identity=ref["identity"], tokens=ref["tokens"], unit=unit
            )
            click.echo(line, err=True)
        sys.stdout.write(text)
        counts = {
            "tools": message(plural(expanded, "cli.sdk.tools.one", "cli.sdk.tools.other"), n=expanded),
            "types": message(plural(types, "cli.sdk.types.one", "cli.sdk.types.other"), n=types),
        }
        click.echo(message("cli.sdk.cost", tokens=cost, unit=unit, **counts), err=True)
        return 0

    return sdk
