"""One session of the reference host: its log, surface, turns, commands, compaction and forks."""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hookspecs.i18n import message
from hookspecs.reference.builtin import host_sections
from hookspecs.reference.errors import HostError
from hookspecs.reference.family import Lineage
from hookspecs.reference.model import Model, ModelRequest
from hookspecs.reference.session_log import Event, SessionLog
from hookspecs.reference.surface import Surface
from hookspecs.serialization import detached, unstructure
from hookspecs.services import SPILL_HANDLE
from hookspecs.types import (
    AgentRef,
    CommandReceipt,
    CommandRequest,
    CompactionInfo,
    ContextMessage,
    PromptContext,
    PromptSection,
    ReceiptStatus,
    SessionInfo,
    SessionRecord,
    StepInfo,
    ToolCall,
    ToolResult,
    ToolSpec,
    TurnStart,
    TurnSummary,
)

if TYPE_CHECKING:
    from hookspecs.reference.host import ReferenceHost


class Session:
    """A live session. Every change is an event appended to the log, then applied.

    Resume replays the same events through :meth:`apply`, so the rebuilt
    surface, turn counter and records equal the ones before the restart.
    """

    def __init__(self, host: ReferenceHost, info: SessionInfo, log: SessionLog, scope: frozenset[str] | None) -> None:
        self.host = host
        self.info = info
        self.log = log
        self.scope = scope
        """Tool names this agent may see (``None``: everything the host offers)."""
        self.model: Model | None = None
        self.surface = Surface()
        self.turn = 0
        self.records: list[SessionRecord] = []
        self.diagnostics: list[str] = []
        self.lineage = Lineage()
        """This session's part of its family's lineage: children forked, started, settlements."""
        self.spilled: dict[str, str] = {}
        """Top-level call id -> the spill handle its result's preview names (contract 1.3, ADR 0069)."""
        self._direct_calls = 0
        self.max_steps: int | None = None
        """This session's own bound on a turn's model steps (a child's caps, ADR 0116); ``None``: the host's."""

    @property
    def agent(self) -> AgentRef:
        return self.info.agent

    # -- events -------------------------------------------------------------------
    def append(self, type_: str, data: dict[str, Any], *, durable: bool = False, defer: bool = False) -> Event:
        event = self.log.append(type_, data, durable=durable, defer=defer)
        self.apply(event)
        if self.host.spill is not None and (
            type_ == "compaction" or (type_ == "tool-settled" and data.get("call_id") in self.spilled)
        ):
            # Pinned as the surface changes, so shutdown's sweep keeps what a resume shows (ADR 0069).
            self.host.spill.pin(self.agent.session_id, self.spill_handles())
        return event

    def flush(self) -> None:
        """Write the events queued with ``defer`` (group commit, ADR 0114)."""
        self.log.flush()

    def refuse(self, reason: str) -> None:
        """Refuse every later event of this session's log (HOST-0105 with ``reason``)."""
        self.log.refuse(reason)

    def spill_handles(self) -> set[str]:
        """Spill handles named by results the surface shows now."""
        visible = self.surface.visible_call_ids()
        return {handle for call_id, handle in self.spilled.items() if call_id in visible}

    def apply(self, event: Event) -> None:
        self.surface.apply(event)
        self.lineage.apply(event)
        if event.type == "user-message":
            self.turn = int(event.data["turn"])
        elif event.type == "tool-settled" and event.data.get("top_level", False):
            handle = (event.data["result"].get("metadata") or {}).get(SPILL_HANDLE)
            if isinstance(handle, str):
                self.spilled[event.data["call_id"]] = handle
        elif event.type == "record":
            data = event.data
            self.records.append(SessionRecord(kind=data["kind"], version=data["version"], payload=data["payload"]))

    def call_id(self, local: str) -> str:
        """The id the host hands out for this session's call ``local`` (``call-<turn>-<step>-<i>``,
        ``direct-<n>``): it names the session, so no two sessions or families of one host process —
        nor a resumed session and another — are ever handed the same id (ADR 0089)."""
        return f"{local}@{self.agent.session_id}"

    # -- model turns ----------------------------------------------------------------
    def prompt_context(self) -> PromptContext:
        return PromptContext(
            agent=self.agent,
            model_route=self.info.model_route,
            tools=self.host.view(self.agent).specs(),
            workspace=self.info.workspace,
        )

    def prompt_sections(self) -> list[PromptSection]:
        """The skill catalog is chosen first, so the host's own sections never run a hook inside a hook."""
        context = self.prompt_context()
        facade, services = self.host.facade, self.host.services
        listed = facade.skill_catalog(context, services, services.skills(self.agent))
        return facade.prompt_sections(context, services, own=host_sections(context, listed))

    def model_tools(self) -> list[ToolSpec]:
        """The tools offered natively to the model for the next request."""
        return self.host.facade.model_tools(self.prompt_context(), self.host.services)

    def system_prompt(self) -> str:
        return "\n\n".join(s.text for s in self.prompt_sections())

    async def run_turn(self, text: str, *, grants: Sequence[str] = ()) -> TurnSummary:
        """Send a user message and loop model steps until the model answers without tool calls.

        ``grants`` are rights the embedder grants for this turn alone on the user's behalf (contract 1.6,
        :class:`~hookspecs.types.TurnStart`); the model can never add one.
        """
        if self.model is None:
            raise HostError("HOST-0305", session=self.agent.session_id)
        with self.host.families.work(self):  # live until the turn ends; its end may settle the family
            return await self._turn(self.model, text, tuple(grants))

    async def _turn(self, model: Model, text: str, grants: tuple[str, ...] = ()) -> TurnSummary:
        turn = self.turn + 1
        start = TurnStart(agent=self.agent, turn=turn, user_text=text, grants=grants)
        self.host.facade.turn_started(start, self.host.services)  # before the view and the context messages
        try:
            return await self._steps(model, turn, text)
        finally:  # contract 1.7: however the turn ended, before anything else of the session (ADR 0133)
            self.host.facade.turn_ended(self.agent, turn, self.host.services)

    async def _steps(self, model: Model, turn: int, text: str) -> TurnSummary:
        total_calls = 0
        max_steps = self.max_steps or self.host.max_steps
        for step_number in range(1, max_steps + 1):
            # Context messages go before new work: on the first step, before the user's message.
            self.offer_step(turn, step_number)
            if step_number == 1:
                self.append("user-message", {"turn": turn, "text": text})
            request = ModelRequest(
                system=self.system_prompt(),
                messages=self.surface.messages(),
                tools=tuple(self.model_tools()),
            )
            answer = await model.complete(request)
            calls = [
                ToolCall(
                    call_id=c.call_id or self.call_id(f"call-{turn}-{step_number}-{i}"),
                    tool=c.tool,
                    arguments=detached(c.arguments),
                    caller=self.agent,
                )
                for i, c in enumerate(answer.tool_calls)
            ]
            self._answered(turn, step_number, answer.text, calls)
            if not calls:
                summary = TurnSummary(
                    agent=self.agent, turn=turn, steps=step_number, tool_calls=total_calls, final_text=answer.text
                )
                self.append("turn-settled", unstructure(summary) | {"turn": turn}, durable=True)
                self.host.facade.turn_settled(summary, self.host.services)
                return summary
            lane = self.host.dispatcher.new_lane()
            offered = frozenset(t.name for t in request.tools)
            await asyncio.gather(
                *(self.host.dispatcher.dispatch(c, lane, top_level=True, offered=offered) for c in calls)
            )
            total_calls += len(calls)
        raise HostError("HOST-0303", steps=max_steps)

    def offer_step(self, turn: int, step: int) -> list[ContextMessage]:
        """The context-message seam of one model step: the view rebuilt (as before every step), then the
        messages the plugins offer committed to the log, in order; returns them.

        :meth:`run_turn` runs it before each of its model requests; a client in the model's seat (mcp-serve,
        the llm plugin, ADR 0073) runs it where its model would read them (opening, after each call).
        """
        self.host.invalidate_views(self.agent)
        messages = self.host.facade.context_messages(
            StepInfo(agent=self.agent, turn=turn, step=step), self.host.services
        )
        for msg in messages:
            data = {"provenance": msg.provenance, "text": msg.text, "turn": turn, "step": step}
            self.append("context-message", data, durable=True)
        return messages

    async def seat_call(
        self, *, turn: int, step: int, call_id: str, tool: str, arguments: Mapping[str, Any]
    ) -> ToolResult:
        """One model step whose single call a client in the model's seat made: logged as the assistant's
        message, dispatched top-level with the tools the session offers now (validation, guard and plan
        exactly as for a model's call), as work of the family (its end may settle it). Never raises for the
        tool's failure: the result says it.
        """
        call = ToolCall(call_id=call_id, tool=tool, arguments=detached(dict(arguments)), caller=self.agent)
        offered = frozenset(spec.name for spec in self.model_tools())
        self._answered(turn, step, "", [call])
        dispatcher = self.host.dispatcher
        with self.host.families.work(self):
            return await dispatcher.dispatch(call, dispatcher.new_lane(), top_level=True, offered=offered)

    def _answered(self, turn: int, step: int, text: str, calls: Sequence[ToolCall]) -> None:
        """The model's answer of one step on the log: its text and the calls it made."""
        self.append(
            "assistant-message",
            {
                "turn": turn,
                "step": step,
                "text": text,
                # A copy: the tool gets c.arguments and may mutate it; the surface must not follow.
                "tool_calls": [
                    {"call_id": c.call_id, "tool": c.tool, "arguments": detached(c.arguments)} for c in calls
                ],
            },
        )

    async def call_tool(self, tool: str, arguments: dict[str, Any]) -> ToolResult:
        """Dispatch one call directly (not from the model) through the full pipeline.

        The call is logged like any other but does not enter the model surface.
        """
        self._direct_calls += 1
        call = ToolCall(
            call_id=self.call_id(f"direct-{self._direct_calls}"), tool=tool, arguments=arguments, caller=self.agent
        )
        while self._logged(call.call_id):
            self._direct_calls += 1  # resumed session: keep ids unique
            call = ToolCall(
                call_id=self.call_id(f"direct-{self._direct_calls}"), tool=tool, arguments=arguments, caller=self.agent
            )
        with self.host.families.work(self):
            return await self.host.dispatcher.dispatch(call, self.host.dispatcher.new_lane(), top_level=False)

    def _logged(self, call_id: str) -> bool:
        # Nested calls' events are skipped unread (they are not kept in memory): their ids are their outer
        # call's id and a suffix (``<outer>:ptc:<n>``), never a direct call's.
        logged = self.log.of_type("tool-started", "tool-settled", nested=False)
        return any(e.data.get("call_id") == call_id for e in logged)

    # -- commands and compaction ---------------------------------------------------------
    def command(self, line: str) -> CommandReceipt:
        """Run a slash command (``/name args``). No model request is made."""
        text = line.strip().removeprefix("/")
        try:
            words = shlex.split(text)
        except ValueError as exc:  # unbalanced quotes: a failed receipt, not a traceback in the UI
            name = text.split(maxsplit=1)[0] if text.split() else "help"
            refused = CommandReceipt(
                status=ReceiptStatus.FAILED, text=message("host.command-failed", name=name, detail=str(exc))
            )
            self.log.append("command", {"name": name, "args": [], "status": refused.status.value})
            return refused
        name, args = (words[0], tuple(words[1:])) if words else ("help", ())
        request = CommandRequest(name=name, args=args, agent=self.agent)
        receipt = self.host.facade.command(request, self.host.services)
        if receipt is None:
            known = ", ".join(sorted(f"/{c.name}" for c in self.host.command_table()))
            receipt = CommandReceipt(
                status=ReceiptStatus.FAILED, text=message("host.unknown-command", name=name, known=known)
            )
        self.log.append("command", {"name": name, "args": list(args), "status": receipt.status.value})
        return receipt

    def compact(self, summary: str | None = None) -> CompactionInfo:
        """Replace the surface with a summary, keeping the tool calls and the context messages of the latest turn.

        The kept context messages' provenances are reported (contract 1.3), so a
        plugin knows which of its messages the model still sees.
        """
        latest = {cid for e in self.surface.entries if e.turn == self.turn for cid in e.call_ids}
        text = summary or message("host.compaction-summary", count=len(self.surface.entries))
        info = CompactionInfo(
            agent=self.agent,
            summary=text,
            kept_call_ids=tuple(sorted(latest)),
            kept_provenances=self.surface.provenances(self.turn),
        )
        kept = {"kept_call_ids": list(info.kept_call_ids), "kept_provenances": list(info.kept_provenances or ())}
        self.append("compaction", {"summary": text, **kept, "turn": self.turn}, durable=True)
        self.host.facade.compaction(info, self.host.services)
        return info

    async def fork(self, *, title: str = "", tools: list[str] | None = None, workspace: Path | None = None) -> Session:
        """Start a child agent in this session's family; ``tools`` narrows (never widens) the view,
        ``workspace`` (default: this session's) is where the child works."""
        return await self.host.fork_session(self, title=title, tools=tools, workspace=workspace)

    def close(self) -> None:
        self.log.close()
