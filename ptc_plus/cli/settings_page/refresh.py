"""The page's refresh button: ``/capabilities refresh`` itself, on a session no other process holds (ADR 0130).

A refresh is a transition of the session's host (ADR 0068): it needs the session's state, the host's
tools of now and its record store. The page is not the host of a session another process runs, and it
does not reach into one: a live session is refused with :class:`SessionLiveElsewhere` (run the command
there). A session that is not live is only its log; the page then becomes its host for the one command,
as ``llm capabilities refresh`` does for a conversation: it resumes the session in the reference host
(the workspace's tools, as the page's plan has them; PTC Plus and the installed plugins loaded), types
``/capabilities refresh`` through the host's command path and closes the host again. The receipt is the
slash command's own receipt, not a copy of its wording.

Races: resuming takes the log's exclusive lock without waiting, so a refresh racing another refresh (a
second tab), a ``chat --resume`` or any host opening the session is refused with the same
:class:`SessionLiveElsewhere` instead of waiting or sharing; whoever holds the lock first does the whole
thing. The transition persists one record in one append before swapping the plan, so a page stopped
mid-refresh leaves the old plan or the new one (ADR 0068), never a mix.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import attrs

from hookspecs import CommandReceipt
from hookspecs.reference import HostError
from hookspecs.reference.demo_tools import demo_tool_definitions
from ptc_plus.capabilities import CapabilityKind
from ptc_plus.cli.errors import (
    ConversationRefreshedByLlm,
    SessionLiveElsewhere,
    SessionNotListed,
    SessionToolsElsewhere,
)
from ptc_plus.cli.settings_page.paths import shown
from ptc_plus.cli.settings_page.session_section import Shown
from ptc_plus.cli.settings_page.sessions import HOST_STATE, Kind, SessionRow, find_session
from ptc_plus.cli.workspace_plan import new_session_plan
from ptc_plus.doors import embedded, login_name
from ptc_plus.errors import PtcError
from ptc_plus.plan import CapabilityPlan
from ptc_plus.session import REFRESH_COMMAND

LOCKED = "HOST-0102"
"""The reference host's code for a log another process holds open."""
REFUSED = "refused"
"""What the page shows as the status of a refresh it did not run."""


@attrs.frozen(kw_only=True)
class Refreshed:
    """What the page shows after a refresh: the session, and the receipt ``/capabilities refresh`` gave."""

    session_id: str
    receipt: CommandReceipt


def refresh_session(workspace: Path, row: SessionRow | None, session_id: str, now: CapabilityPlan) -> Refreshed:
    """Run ``/capabilities refresh`` on the listed session ``row`` (``None``: ``session_id`` is not listed);
    ``now`` is the plan the page computes, over the tools it can lend the session.

    :raises SessionNotListed: ``row`` is ``None``.
    :raises ConversationRefreshedByLlm: an llm conversation (llm refreshes it, with llm's tools).
    :raises SessionToolsElsewhere: the session's frozen plan holds host tools the page does not have (a chat
        started with ``--tools FILE``): a refresh here would drop them, so it is refused, not guessed.
    :raises SessionLiveElsewhere: another process holds the session open (now, or by the time it was resumed).
    """
    if row is None:
        raise SessionNotListed(session=session_id)
    if row.kind is Kind.LLM:
        raise ConversationRefreshedByLlm(session=row.session_id, conversation=row.session_id.removeprefix("llm-"))
    missing = _host_tools_missing(row.plan, now)
    if missing:
        raise SessionToolsElsewhere(session=row.session_id, tools=", ".join(missing))
    if row.live:
        raise SessionLiveElsewhere(session=row.session_id, log=shown(row.log))
    receipt = asyncio.run(_command(workspace, row))  # the caller's worker thread: a loop of its own
    return Refreshed(session_id=row.session_id, receipt=receipt)


def _host_tools_missing(frozen: CapabilityPlan | None, now: CapabilityPlan) -> tuple[str, ...]:
    """The host tools of ``frozen`` that ``now`` does not know: tools the session's own host lent it."""
    if frozen is None:
        return ()
    known = {entry.identity for entry in now.entries}
    return tuple(
        entry.identity for entry in frozen.entries if entry.kind is CapabilityKind.TOOL and entry.identity not in known
    )


async def _command(workspace: Path, row: SessionRow) -> CommandReceipt:
    tools = demo_tool_definitions(workspace)  # the tools the page plans with (``capabilities plan``'s default)
    async with embedded(workspace, tools=tools, state=workspace / HOST_STATE, user=login_name()) as host:
        try:
            session = await host.resume_session(row.session_id)
        except HostError as error:
            if error.code == LOCKED:  # taken since it was listed: a refresh, a chat or a host came first
                raise SessionLiveElsewhere(session=row.session_id, log=shown(row.log)) from None
            raise
        return session.command(REFRESH_COMMAND)


def refresh_route(workspace: Path, session_id: str, lang: str, serial: threading.Lock) -> tuple[Shown, int]:
    """The ``/refresh`` route's work (in a worker thread): what to show and the HTTP status.

    ``200`` with the slash command's receipt (whatever its status: ``failed`` is the command's own answer),
    ``404`` for a session the workspace does not list, ``409`` for one the page may not refresh now.
    ``serial`` keeps this page's refreshes one at a time; other processes are kept out by the log's lock.
    """
    with serial:
        now = new_session_plan(workspace).plan
        row = find_session(workspace, session_id, now, lang)
        try:
            done = refresh_session(workspace, row, session_id, now)
        except (PtcError, HostError) as error:  # HostError: the log could not be resumed (damaged), in its words
            status = 404 if isinstance(error, SessionNotListed) else 409
            return Shown(session_id=session_id, status=REFUSED, text=f"{error.code}: {error.message(lang)}"), status
    return Shown(session_id=session_id, status=done.receipt.status.value, text=done.receipt.text), 200
