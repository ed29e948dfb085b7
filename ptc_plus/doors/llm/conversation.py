"""One llm conversation as one session of the embedded reference host, the llm model in the model's seat.

The session's id is ``llm-<conversation id>``; its log lives under llm's user
directory (``<LLM_USER_PATH>/ptc-plus/sessions``), so continuing the
conversation (``-c``, ``--cid``) resumes it, and with it the plan frozen when
the conversation first met PTC Plus; a refresh is recorded in that log and
changes that conversation only. The session is its family, so statistics
count one family per conversation, revised at each settlement (ADR 0074).

Each llm request is one turn: when llm asks for its tools the turn opens and
its first step commits what the plugin owes the model (the catalog, a refresh
notice); the model reads those on ``run_code``'s description, which llm sends
with every request. Each call the model makes is one more step, dispatched
top-level like a model's call; what the plugin owes after it goes with its
result. A host is opened for each use and closed after it: between uses the
session is only its log.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import llm

from hookspecs import CommandReceipt, ToolDefinition, ToolSpec
from hookspecs.reference import Approver, ReferenceHost, Session, seat_text
from ptc_plus.discovery import CatalogSnapshot
from ptc_plus.doors import Scratch, SeatAnswer, SeatTool, embedded, login_name
from ptc_plus.doors.llm.errors import NoSession, SessionNotOpened
from ptc_plus.plugin import controller

STATE = "ptc-plus"
"""The directory under llm's user directory holding the sessions (and their spilled text)."""
HOST_SECTION = "host"
"""The host's own preamble ("you are an agent in ..."): llm's model has its own system prompt."""
REQUEST = "llm: a request of the conversation"
"""The user-message text that opens each turn (the prompt itself is llm's, never copied here)."""

T = TypeVar("T")


def state_dir() -> Path:
    return Path(llm.user_dir()) / STATE  # type: ignore[no-untyped-call]


def session_id(conversation_id: str) -> str:
    return f"llm-{conversation_id}"


def blocking(work: Callable[[], Awaitable[T]]) -> T:
    """Run ``work`` to its end on an event loop of its own thread (llm may call a tool from a running loop)."""

    def run() -> T:
        async def main() -> T:
            return await work()

        return asyncio.run(main())

    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="ptc-plus-llm") as pool:
        return pool.submit(run).result()


class Conversation:
    """The session of one llm conversation on an open host; get one with :func:`opened`."""

    def __init__(self, host: ReferenceHost, session: Session) -> None:
        self.host = host
        self.session = session
        self._step = _last_step(session)
        self._stepped = False
        """Whether this host ran a step of the session (an offer made in another process is not its own)."""

    # -- what the model reads ------------------------------------------------------------
    def open_turn(self) -> None:
        """A new llm request: a turn whose first step commits what the plugin owes the model now."""
        turn = self.session.turn + 1
        self.session.append("user-message", {"turn": turn, "text": REQUEST})
        self._step = 0
        self._run_step()

    def offered(self) -> list[SeatTool]:
        """The plugin's tools the model is offered (``run_code`` carrying the PTC text; ``read_spill``).

        Empty when the session is native: llm's own tools then stand as they are.
        """
        llm_tools = set(self.host.host_tool_names())
        specs = [spec for spec in self.session.model_tools() if spec.name not in llm_tools]
        return [self._offered(spec) for spec in specs]

    def _offered(self, spec: ToolSpec) -> SeatTool:
        description = spec.description
        if spec.name == "run_code":
            description = "\n\n".join(part for part in (description, self.ptc_text()) if part)
        return SeatTool(name=spec.name, description=description, input_schema=spec.input_schema)

    def ptc_text(self) -> str:
        """The plugins' prompt sections, then the context messages the surface carries (the catalog, notices)."""
        sections = [s.text for s in self.session.prompt_sections() if s.name != HOST_SECTION]
        context = [str(e.message["content"]) for e in self.session.surface.entries if e.provenance is not None]
        return "\n\n".join([*sections, *context])

    # -- calls ---------------------------------------------------------------------------
    async def call(self, name: str, arguments: Mapping[str, Any], call_id: str) -> SeatAnswer:
        """One model step: ``name`` dispatched top-level with the tools the model was offered; never raises
        for a tool's failure."""
        if self.session.turn == 0:
            self.open_turn()
        elif not self._stepped:
            # The request that made this call carried run_code's description, which holds what the plugin
            # owed at the turn's opening; a host resumed for the call offers it again at a step of its own,
            # so the call's step proves it (a resume cannot carry an unproven offer over).
            self._run_step()
        step = self._next_step()
        # Its end settles the family: the conversation's sample.
        result = await self.session.seat_call(
            turn=self.session.turn, step=step, call_id=call_id, tool=name, arguments=arguments
        )
        owed = self._run_step()
        return SeatAnswer(text=seat_text(result), ok=result.ok, owed=tuple(owed))

    def command(self, text: str) -> CommandReceipt:
        """A slash command through the host's command path: the receipt the person reads."""
        return self.session.command(text)

    def snapshot(self) -> CatalogSnapshot | None:
        """What the conversation's discovery answers from (``None``: no code mode)."""
        return controller(self.host.services).discovery(self.session.agent)

    def _next_step(self) -> int:
        self._step += 1
        return self._step

    def _run_step(self) -> list[str]:
        """The context-message seam for the next step; its messages are committed to the log."""
        number = self._next_step()
        self._stepped = True
        return [msg.text for msg in self.session.offer_step(self.session.turn, number)]


@contextlib.asynccontextmanager
async def opened(
    conversation_id: str | None,
    tools: Sequence[ToolDefinition],
    *,
    approver: Approver | None = None,
    create: bool = True,
    workspace: Path | None = None,
) -> AsyncIterator[Conversation]:
    """The conversation's session on a host opened for this use (resumed if its log exists, else started).

    Without a conversation (a tool listing, a call outside any conversation) the
    session is a throwaway one in a temporary directory.

    :raises NoSession: ``create`` is false and the conversation has no session.
    :raises SessionNotOpened: the host or a plugin failed to open it.
    """
    where = Path.cwd() if workspace is None else workspace
    state = Scratch("ptc-llm-") if conversation_id is None else state_dir()
    async with embedded(where, tools=tools, approver=approver, state=state, user=login_name()) as host:
        sid = session_id(conversation_id) if conversation_id is not None else None
        if sid is not None and not host.log_path(sid).exists() and not create:
            raise NoSession(conversation=conversation_id)
        try:
            if sid is not None and host.log_path(sid).exists():
                session = await host.resume_session(sid)
            else:
                session = await host.start_session(user_id=login_name(), title="llm", session_id=sid)
        except Exception as error:  # a plugin's or the host's failure: one clear line
            raise SessionNotOpened(detail=f"{type(error).__name__}: {error}") from error
        yield Conversation(host, session)


def _last_step(session: Session) -> int:
    """The highest step number the session's current turn reached (0 before any)."""
    steps = [
        int(e.data["step"])
        for e in session.log.events
        if e.data.get("turn") == session.turn and isinstance(e.data.get("step"), int)
    ]
    return max(steps, default=0)


__all__ = ["Conversation", "blocking", "opened", "session_id", "state_dir"]
