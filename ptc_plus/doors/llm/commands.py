"""``llm capabilities``: the conversation's plan, its refresh and its discovery, as the slash commands give them.

``llm capabilities`` and ``llm capabilities refresh`` run ``/capabilities``
and ``/capabilities refresh`` through the host's command path on the
conversation's session (default: the latest conversation, as ``llm -c``), so
they print the same receipts; a refresh changes that conversation only.
``search`` answers from that conversation's plan (``off`` members never
found), like a program's ``capabilities.search``. ``plan`` and ``set`` are
``ptc-plus capabilities plan`` and ``set`` themselves: the workspace's config
(``plan`` over llm's tools unless ``--tools`` names others; ADR 0074).

The session machinery (the embedded host, the plugin, discovery, the
``ptc-plus`` command line) is imported when a command runs: llm registers its
commands at every start, and loading it there would slow every llm command.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click
import llm
import orjson

from hookspecs import CommandReceipt, ReceiptStatus
from ptc_plus.doors.llm import host_tools
from ptc_plus.doors.llm.chain_context import ChainContext, latest_conversation
from ptc_plus.doors.llm.errors import NoConversation
from ptc_plus.errors import PtcError
from ptc_plus.i18n import message

MOUNTED = ("plan", "set")
"""Subcommands of ``ptc-plus capabilities`` mounted as they are."""
SEARCH_LIMIT = 10

ToolSource = Callable[[], dict[str, llm.Tool]]


class _Capabilities(click.Group):
    """Mounts ``ptc-plus capabilities plan``/``set`` when first asked for, and reports a :class:`PtcError` as
    llm reports its own errors (one line, exit 1), never a traceback."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*super().list_commands(ctx), *MOUNTED]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in MOUNTED:
            return _mounted(cmd_name)
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except PtcError as error:
            raise click.ClickException(f"{error.code}: {error.message()}") from error


def _mounted(name: str) -> click.Command:
    """``ptc-plus capabilities <name>`` itself, over llm's tools unless ``--tools`` names others."""
    from ptc_plus.cli import build_cli

    ptc_capabilities = build_cli().commands["capabilities"]
    assert isinstance(ptc_capabilities, click.Group)
    mounted = ptc_capabilities.commands[name]
    for param in mounted.params:
        if param.name == "tools":
            param.default = host_tools.TOOL_SET
    return mounted


def _cid_option() -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return click.option("--cid", "conversation", metavar="ID", help=message("ptc.llm.capabilities.cid"))


def capabilities_group(tools: ToolSource) -> click.Group:
    """The ``capabilities`` group for llm's CLI; ``tools`` gives llm's other tools when a command needs them."""

    @click.group(
        "capabilities", cls=_Capabilities, invoke_without_command=True, help=message("ptc.llm.capabilities.help")
    )
    @_cid_option()
    @click.pass_context
    def group(ctx: click.Context, conversation: str | None) -> None:
        if ctx.invoked_subcommand is None:
            click.echo(_command(tools, conversation, "/capabilities").text)

    @group.command("refresh", help=message("ptc.llm.capabilities.refresh.help"))
    @_cid_option()
    @click.option("--dry-run", is_flag=True, help=message("ptc.llm.capabilities.refresh.dry-run"))
    def refresh(conversation: str | None, dry_run: bool) -> None:
        receipt = _command(tools, conversation, "/capabilities refresh" + (" --dry-run" if dry_run else ""))
        click.echo(receipt.text)
        if receipt.status is ReceiptStatus.FAILED:
            raise click.exceptions.Exit(1)

    @group.command("search", help=message("ptc.llm.capabilities.search.help"))
    @click.argument("query")
    @_cid_option()
    @click.option("--limit", type=click.IntRange(min=1), default=SEARCH_LIMIT, show_default=True)
    @click.option("--budget", type=click.IntRange(min=1), default=None)
    @click.option("--json", "as_json", is_flag=True, help=message("ptc.llm.capabilities.search.json"))
    def search(query: str, conversation: str | None, limit: int, budget: int | None, as_json: bool) -> None:
        from ptc_plus.cli import print_search
        from ptc_plus.doors.llm.conversation import blocking

        snapshot, found = blocking(lambda: _search(tools, _conversation(conversation), query, limit, budget))
        if as_json:
            click.echo(orjson.dumps(found, option=orjson.OPT_INDENT_2).decode())
        elif snapshot is None:  # the conversation's session offers no discovery (a native presentation)
            click.echo(message("cli.capabilities.search.none", query=repr(query)))
        else:
            # The same list as ``ptc-plus capabilities search``, over this conversation's plan.
            print_search(snapshot, query, found)

    return group


def _conversation(given: str | None) -> str:
    conversation = given or latest_conversation()
    if conversation is None:
        raise NoConversation(conversation="-")
    return conversation


def _command(tools: ToolSource, given: str | None, text: str) -> CommandReceipt:
    from ptc_plus.doors.llm.conversation import blocking, opened

    conversation = _conversation(given)

    async def run() -> CommandReceipt:
        definitions = host_tools.definitions(tools(), ChainContext())
        async with opened(conversation, definitions, create=False) as session:
            return session.command(text)

    return blocking(run)


async def _search(
    tools: ToolSource, conversation: str, query: str, limit: int, budget: int | None
) -> tuple[Any, dict[str, Any]]:
    """The conversation's snapshot (``None`` without discovery) and its discovery answer for ``query``."""
    from ptc_plus import discovery
    from ptc_plus.discovery import InvalidBudget, InvalidDiscoveryArgument
    from ptc_plus.doors.llm.conversation import opened

    async with opened(conversation, host_tools.definitions(tools(), ChainContext()), create=False) as session:
        snapshot = session.snapshot()
        if snapshot is None:
            return None, {"expanded": [], "not_expanded": [], "presentation": "native"}
        try:
            return snapshot, dict(discovery.search(snapshot, query, budget=budget, limit=limit))
        except (InvalidDiscoveryArgument, InvalidBudget) as error:
            raise click.UsageError(f"{error.code}: {error.message()}") from error
