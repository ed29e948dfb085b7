"""One MCP client's session on the embedded reference host, with the MCP client in the model's seat (ADR 0073).

The client is the model: what a model would find in its system prompt (the
plugin's sections, the catalog message) it finds in the tool descriptions and
the server ``instructions``; each of its ``tools/call`` requests is one model
step whose single call is dispatched top-level, through the host's validation,
guard and plan, exactly as a model's would be; what the plugin owes the model at
the step after a call (a refresh notice, an expansion of contracts a program
looked up) comes back with that call's result. The session is one family, so
statistics count one family per client session, revised at each settlement.

This module knows nothing of the MCP wire (:mod:`.serve` maps it); it speaks to
the host through the host contract only, except discovery, which it reads from
the plugin's own controller (a discovery request is never a tool dispatch).
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import orjson

from hookspecs import AgentRef, CommandReceipt, ReceiptStatus, ToolDefinition, ToolSpec
from hookspecs.reference import ReferenceHost, Session, seat_text
from ptc_plus import discovery
from ptc_plus.discovery import InvalidBudget, InvalidDiscoveryArgument
from ptc_plus.doors import Scratch, SeatAnswer, SeatTool, embedded
from ptc_plus.doors.mcp.serve_errors import SearchArguments, SearchUnavailable, ServeNotOpened
from ptc_plus.errors import PtcError
from ptc_plus.i18n import message
from ptc_plus.plugin import controller
from ptc_plus.runtime import DiscoveryRequestTooLarge, check_discovery_bounds, in_discovery_thread

SEARCH_TOOL = "search_capabilities"
RUN_CODE = "run_code"
HOST_SECTION = "host"
"""The host's own preamble ("you are an agent in ..."): the client has its own, so it is not served."""
OPENING = "mcp-serve: a client connected"
"""The opening user message in the session log: the turn every served step belongs to."""
TURN = 1


@attrs.frozen(kw_only=True)
class Refreshed:
    """``/capabilities refresh`` as the person asked it, and the notice the model must read when it applied."""

    receipt: CommandReceipt
    notice: tuple[str, ...] = ()

    @property
    def applied(self) -> bool:
        return self.receipt.status is ReceiptStatus.APPLIED


@contextlib.asynccontextmanager
async def served(
    workspace: Path, tools: Sequence[ToolDefinition], *, user_id: str, scratch: str
) -> AsyncIterator[ServedSession]:
    """One client's session on a host embedded for it, its state in a scratch directory named ``scratch…``
    (a served session is never resumed); host and directory go when the block ends.

    :raises ServeNotOpened: the host or a plugin failed to open the session.
    """
    async with embedded(workspace, tools=tools, state=Scratch(scratch), user=user_id) as host:
        try:
            session = await ServedSession.open(host, user_id=user_id)
        except Exception as error:  # a plugin's or the host's failure: one clear line, not a dead pipe
            raise ServeNotOpened(detail=f"{type(error).__name__}: {error}") from error
        yield session


class ServedSession:
    """A root session of ``host`` answering one MCP client; open it with :meth:`open`."""

    def __init__(self, host: ReferenceHost, session: Session, instructions: str, owed: Sequence[str]) -> None:
        self.host = host
        self.session = session
        self.instructions = instructions
        """The catalog (and, without ``run_code``, the plugins' prompt sections): the server ``instructions``."""
        self._owed = list(owed)
        self._steps = itertools.count(3)  # step 1 offered the instructions, step 2 took the handshake as proof
        self._calls = itertools.count(1)

    @classmethod
    async def open(cls, host: ReferenceHost, *, user_id: str, title: str = "mcp-serve") -> ServedSession:
        """Start the session (the plugin freezes its plan) and deliver its opening context messages.

        MCP hands ``instructions`` to the client in the handshake, before any
        other request can be made: once the server answers with them, they are
        committed, so the offer is proven at once by a second step (which may
        itself owe something; that goes with the first call's result).
        """
        session = await host.start_session(user_id=user_id, title=title)
        opening = _step(session, 1)
        session.append("user-message", {"turn": TURN, "text": OPENING})
        owed = _step(session, 2)
        return cls(host, session, _instructions(session, opening), owed)

    @property
    def agent(self) -> AgentRef:
        return self.session.agent

    # -- tools -----------------------------------------------------------------------
    def tools(self) -> list[SeatTool]:
        """The host's native list for this session (``run_code`` and ``read_spill`` under code mode; every
        tool when the session is native), then ``search_capabilities`` when discovery is available."""
        specs = self.session.model_tools()
        served = [self._served(spec) for spec in specs]
        if self._snapshot() is not None:
            served.append(_search_tool())
        return served

    def _served(self, spec: ToolSpec) -> SeatTool:
        description = spec.description
        if spec.name == RUN_CODE and (sections := _plugin_sections(self.session)):
            description = description + "\n\n" + sections  # the bootstrap: how to write a program
        return SeatTool(name=spec.name, description=description, input_schema=spec.input_schema)

    async def call(self, name: str, arguments: Mapping[str, Any]) -> SeatAnswer:
        """One model step: ``name`` dispatched top-level with the tools the client was offered.

        A tool the session does not offer is refused by the host as unknown; the guard refuses
        what the plan keeps out. Never raises for a tool's failure.
        """
        if name == SEARCH_TOOL:
            return self._take(await self.search(arguments))
        step = next(self._steps)
        call_id = f"mcp-{next(self._calls)}"
        # Its end settles the family: one sample, revised.
        result = await self.session.seat_call(turn=TURN, step=step, call_id=call_id, tool=name, arguments=arguments)
        # The step after the call is where the model reads its result: what the plugin owes then goes with it.
        after = _step(self.session, next(self._steps))
        return self._take(SeatAnswer(text=seat_text(result), ok=result.ok, owed=tuple(after)))

    def _take(self, served: SeatAnswer) -> SeatAnswer:
        """``served`` with what was owed before it (once)."""
        if not self._owed:
            return served
        owed, self._owed = tuple(self._owed), []
        return attrs.evolve(served, owed=(*owed, *served.owed))

    async def search(self, arguments: Mapping[str, Any]) -> SeatAnswer:
        """``search_capabilities``: the plan's discovery answer, never a dispatch (never counted as use).

        The request takes the bounds a program's ``capabilities.search`` takes (a query, or a list of at
        most 8 phrasings, ADR 0104, of at most 1000 characters each, ``PTC-2008`` beyond) and is served in
        the same discovery thread, off the event loop (ADR 0042, 0087).
        """
        snapshot = self._snapshot()
        if snapshot is None:
            error: PtcError = SearchUnavailable(presentation=str(self._presentation()))
            return SeatAnswer(text=f"{error.code}: {error.message('en')}", ok=False)
        try:
            query, budget, limit = _search_arguments(arguments)
            check_discovery_bounds("search", {"query": query, "limit": limit})
            text = await in_discovery_thread(_search_text, snapshot, query, budget, limit)
        except (SearchArguments, InvalidDiscoveryArgument, InvalidBudget, DiscoveryRequestTooLarge) as error:
            return SeatAnswer(text=f"{error.code}: {error.message('en')}", ok=False)
        return SeatAnswer(text=text, ok=True)

    def _snapshot(self) -> Any:
        return controller(self.host.services).discovery(self.agent)

    def plan_sequence(self) -> int:
        """The number of the refresh whose plan is in force (0: the opening plan, or no plan)."""
        state = controller(self.host.services).session(self.agent)
        return state.environment.sequence if state is not None and state.environment is not None else 0

    def _presentation(self) -> str:
        state = controller(self.host.services).session(self.agent)
        return str(state.presentation) if state is not None else "native"

    def diagnostics(self) -> list[str]:
        """What the session's opening found wrong (config issues, refused MCP servers, servers that did not
        start), as ``/capabilities`` lists them."""
        return [str(line) for line in self.show().data.get("diagnostics", [])]

    # -- commands ----------------------------------------------------------------------
    def show(self) -> CommandReceipt:
        """``/capabilities``: the same receipt the slash command gives."""
        return self.session.command("/capabilities")

    def refresh(self) -> Refreshed:
        """``/capabilities refresh``; when it applied, the step after it carries the notice (and the new catalog)."""
        receipt = self.session.command("/capabilities refresh")
        if receipt.status is not ReceiptStatus.APPLIED:
            return Refreshed(receipt=receipt)
        notice = _step(self.session, next(self._steps))
        return Refreshed(receipt=receipt, notice=(*self._drain(), *notice))

    def _drain(self) -> tuple[str, ...]:
        owed, self._owed = tuple(self._owed), []
        return owed


def _step(session: Session, number: int) -> list[str]:
    """The context-message seam for one step of the served turn (committed to the log); the messages' texts."""
    return [msg.text for msg in session.offer_step(TURN, number)]


def _plugin_sections(session: Session) -> str:
    """The system-prompt sections plugins contribute (the host's own preamble left out)."""
    return "\n\n".join(s.text for s in session.prompt_sections() if s.name != HOST_SECTION)


def _instructions(session: Session, opening: Sequence[str]) -> str:
    """The opening context messages; without ``run_code`` to carry them, the plugins' sections first."""
    parts = list(opening)
    if not any(spec.name == RUN_CODE for spec in session.model_tools()) and (sections := _plugin_sections(session)):
        parts.insert(0, sections)
    return "\n\n".join(parts)


def _search_text(snapshot: Any, query: str | list[str], budget: int | None, limit: int) -> str:
    found = discovery.search(snapshot, query, budget=budget, limit=limit)
    return orjson.dumps(found, option=orjson.OPT_INDENT_2).decode()


def _search_tool() -> SeatTool:
    schema = {
        "type": "object",
        "properties": {
            "query": {
                "anyOf": [
                    {"type": "string"},
                    {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": discovery.MAX_PHRASINGS},
                ],
                "description": message("ptc.mcp-serve.search.query", "en"),
            },
            "budget": {"type": "integer", "minimum": 1, "description": message("ptc.mcp-serve.search.budget", "en")},
            "limit": {"type": "integer", "minimum": 1, "description": message("ptc.mcp-serve.search.limit", "en")},
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    return SeatTool(
        name=SEARCH_TOOL, description=message("ptc.mcp-serve.search.description", "en"), input_schema=schema
    )


def _search_arguments(arguments: Mapping[str, Any]) -> tuple[str | list[str], int | None, int]:
    unknown = sorted(set(arguments) - {"query", "budget", "limit"})
    if unknown:
        raise SearchArguments(detail=message("ptc.mcp-serve.search.unknown", "en", names=", ".join(unknown)))
    query = arguments.get("query")
    if not isinstance(query, str) and not (
        isinstance(query, list) and query and all(isinstance(phrasing, str) for phrasing in query)
    ):
        raise SearchArguments(detail=message("ptc.mcp-serve.search.query-type", "en"))
    budget = arguments.get("budget")
    limit = arguments.get("limit", discovery.DEFAULT_SEARCH_LIMIT)
    for name, value in (("budget", budget), ("limit", limit)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise SearchArguments(detail=message("ptc.mcp-serve.search.integer", "en", name=name))
    return query, budget, limit
