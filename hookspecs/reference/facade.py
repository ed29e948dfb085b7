"""The one typed façade through which the reference host calls every seam.

Business code never touches ``pm.hook`` directly. Most seams are plain
pluggy calls. ``tool_execute`` is driven here so that tool bodies can be
``async`` while wrappers stay ordinary pluggy new-style (``wrapper=True``)
generators: the implementation list and its order are pluggy's own
(``tryfirst``/``trylast``, LIFO registration, wrappers outermost); only the
innermost call may be awaited (ADR 0002).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Generator, Sequence
from typing import Any, cast

import attrs
import pluggy

from hookspecs.i18n import message
from hookspecs.services import HostServices, ToolContext, ToolDefinition
from hookspecs.types import (
    AgentRef,
    CommandReceipt,
    CommandRequest,
    CommandSpec,
    CompactionInfo,
    ContextMessage,
    FamilySettlement,
    PromptContext,
    PromptSection,
    ReceiptStatus,
    Refusal,
    ResultStatus,
    SessionInfo,
    SkillSpec,
    StepInfo,
    ToolCall,
    ToolError,
    ToolResult,
    ToolSpec,
    TurnStart,
    TurnSummary,
)

_log = logging.getLogger(__name__)

_PLAIN_HOOKEXEC = pluggy.PluginManager("probe")._inner_hookexec
"""What a plugin manager runs hooks with while no call monitoring (``add_hookcall_monitoring``, tracing)
is installed: pluggy's own multicall."""


def error_result(call: ToolCall, code: str, *, dispatched: bool, detail: str = "") -> ToolResult:
    """A non-ok result with a localized message for ``tool-error.<code>``."""
    status = ResultStatus.CANCELLED if code in ("cancelled", "abandoned") else ResultStatus.ERROR
    text = message(f"tool-error.{code}", tool=call.tool, detail=detail)
    return ToolResult(
        call_id=call.call_id,
        tool=call.tool,
        status=status,
        error=ToolError(code=code, message=text),
        dispatched=dispatched,
    )


class HookFacade:
    """Typed calls into every seam of the contract."""

    def __init__(self, pm: pluggy.PluginManager) -> None:
        self.pm = pm
        self.reports: list[str] = []
        """Exceptions from seams whose failure must not stop the host (reported, not raised)."""
        self._plans: dict[str, tuple[list[pluggy.HookImpl], _PlainPlan | None]] = {}
        """Per hook: the implementations last seen and how to call them past pluggy (``None``: through it)."""
        for impl in pm.hook.agent_host_tool_execute.get_hookimpls():
            if impl.hookwrapper:
                raise TypeError(f"{impl.plugin_name}: agent_host_tool_execute needs wrapper=True, not hookwrapper")

    # -- registration ---------------------------------------------------------
    def tools(self, agent: AgentRef, services: HostServices) -> list[ToolDefinition]:
        return [d for batch in self.pm.hook.agent_host_tools(agent=agent, services=services) for d in batch]

    def commands(self) -> list[CommandSpec]:
        return [c for batch in self.pm.hook.agent_host_commands() for c in batch]

    # -- lifecycle --------------------------------------------------------------
    def session_start(self, session: SessionInfo, services: HostServices) -> None:
        self.pm.hook.agent_host_session_start(session=session, services=services)

    def session_resume(self, session: SessionInfo, services: HostServices) -> None:
        self.pm.hook.agent_host_session_resume(session=session, services=services)

    def agent_fork(self, parent: SessionInfo, child: SessionInfo, services: HostServices) -> None:
        self.pm.hook.agent_host_agent_fork(parent=parent, child=child, services=services)

    def turn_started(self, turn: TurnStart, services: HostServices) -> None:
        """Contract 1.6: an exception aborts the turn (a plain pluggy call: it propagates)."""
        self.pm.hook.agent_host_turn_started(turn=turn, services=services)

    def turn_ended(self, agent: AgentRef, turn: int, services: HostServices) -> None:
        """Contract 1.7: reported, never raised (the turn's outcome, a result or an error, stands)."""
        self._each("agent_host_turn_ended", agent=agent, turn=turn, services=services)

    def turn_settled(self, summary: TurnSummary, services: HostServices) -> None:
        self._each("agent_host_turn_settled", summary=summary, services=services)

    def family_settled(self, family: FamilySettlement, services: HostServices) -> None:
        self._each("agent_host_family_settled", family=family, services=services)

    def compaction(self, compaction: CompactionInfo, services: HostServices) -> None:
        self._each("agent_host_compaction", compaction=compaction, services=services)

    async def shutdown(self, services: HostServices) -> None:
        for awaitable in self._each("agent_host_shutdown", services=services):
            try:
                await awaitable
            except Exception as exc:
                _log.warning("agent_host_shutdown failed", exc_info=exc)
                self.reports.append(f"agent_host_shutdown: {type(exc).__name__}: {exc}")

    def _each(self, hook: str, **kwargs: Any) -> list[Any]:
        """Call every implementation of a reported-failure ``hook`` in pluggy's order; return non-``None`` results.

        A plain pluggy call stops at the first exception, skipping the plugins
        after it; these hooks promise that all implementations run, so each is
        called on its own and a failure is reported. Wrappers are not supported here.
        """
        results: list[Any] = []
        for impl in reversed(getattr(self.pm.hook, hook).get_hookimpls()):
            if impl.wrapper or impl.hookwrapper:
                continue
            try:
                result = impl.function(**{name: kwargs[name] for name in impl.argnames})
            except Exception as exc:
                _log.warning("%s failed in %s", hook, impl.plugin_name, exc_info=exc)
                self.reports.append(f"{hook}: {type(exc).__name__}: {exc}")
                continue
            if result is not None:
                results.append(result)
        return results

    # -- model step -------------------------------------------------------------
    def prompt_sections(
        self, context: PromptContext, services: HostServices, own: Sequence[PromptSection] = ()
    ) -> list[PromptSection]:
        """Plugins' sections and the host's ``own``, sorted by ``(order, name)``."""
        batches = self.pm.hook.agent_host_prompt_sections(context=context, services=services)
        sections = [*own, *(s for batch in batches for s in batch)]
        return sorted(sections, key=lambda s: (s.order, s.name))

    def model_tools(self, context: PromptContext, services: HostServices) -> list[ToolSpec]:
        """The view's tools offered natively to the model, in the chosen order."""
        chosen = self.pm.hook.agent_host_model_tools(context=context, services=services)
        if chosen is None:
            return list(context.tools)
        by_name = {spec.name: spec for spec in context.tools}
        return [by_name[name] for name in dict.fromkeys(chosen) if name in by_name]

    def skill_catalog(
        self, context: PromptContext, services: HostServices, skills: Sequence[SkillSpec]
    ) -> list[SkillSpec]:
        """The skills the host lists in its prompt section, as chosen by plugins."""
        chosen = self.pm.hook.agent_host_skill_catalog(context=context, services=services)
        if chosen is None:
            return list(skills)
        names = set(chosen)
        return [s for s in skills if s.name in names]

    def context_messages(self, step: StepInfo, services: HostServices) -> list[ContextMessage]:
        return [m for batch in self.pm.hook.agent_host_context_messages(step=step, services=services) for m in batch]

    # -- tool dispatch ------------------------------------------------------------
    def _per_call(self, hook: str, kwargs: dict[str, Any]) -> Any:
        """Call ``hook`` as ``pm.hook.<hook>(**kwargs)`` would, past pluggy's wrapper chain when nothing needs it.

        The seams every nested call passes (guard, result) mostly have plain implementations only; then
        pluggy's call is a loop over them, newest first, stopping at the first result of a
        ``firstresult`` hook, and this runs that loop itself (ADR 0123). A wrapper (new or old style), call
        monitoring (tracing), or an argument default in the spec sends the call through pluggy as
        before, so they still see every call.
        """
        caller = getattr(self.pm.hook, hook)
        impls = caller.get_hookimpls()
        plan = self._plans.get(hook)
        if plan is None or plan[0] != impls:  # registrations changed since (or first call): plan again
            plan = (impls, _plain_plan(caller, impls))
            self._plans[hook] = plan
        calls = plan[1]
        if calls is None or self.pm._inner_hookexec is not _PLAIN_HOOKEXEC:
            return caller(**kwargs)
        first, functions = calls
        results: list[Any] = []
        for function, names in functions:
            # Each implementation's arguments are named by the spec, so ``kwargs`` holds them all.
            result = function(*map(kwargs.__getitem__, names))
            if result is not None:
                if first:
                    return result
                results.append(result)
        return None if first else results

    def guard(self, call: ToolCall, spec: ToolSpec, services: HostServices) -> Refusal | None:
        try:
            return cast(
                Refusal | None, self._per_call("agent_host_guard", {"call": call, "spec": spec, "services": services})
            )
        except Exception as exc:
            _log.warning("agent_host_guard failed; the call is refused", exc_info=exc)
            return Refusal(code="guard-error", reason=f"{type(exc).__name__}: {exc}")

    async def tool_execute(self, call: ToolCall, spec: ToolSpec, context: ToolContext) -> ToolResult:
        """Run the wrapper chain around the first implementation that returns a result.

        Never raises for tool failures: an exception escaping the chain
        becomes an error result ``tool-exception``; cancellation becomes
        ``cancelled``. The body is considered dispatched either way.
        """
        kwargs = {"call": call, "spec": spec, "context": context}
        try:
            return await _drive(self.pm.hook.agent_host_tool_execute.get_hookimpls(), kwargs)
        except Exception as exc:
            _log.warning("agent_host_tool_execute failed for %s", call.tool, exc_info=exc)
            return error_result(call, "tool-exception", dispatched=True, detail=f"{type(exc).__name__}: {exc}")

    def tool_result(self, call: ToolCall, result: ToolResult, services: HostServices) -> ToolResult:
        """Apply every annotation: metadata merged in call order, first presentation wins."""
        try:
            annotations = self._per_call(
                "agent_host_tool_result", {"call": call, "result": result, "services": services}
            )
        except Exception as exc:
            _log.warning("agent_host_tool_result failed", exc_info=exc)
            self.reports.append(f"agent_host_tool_result: {type(exc).__name__}: {exc}")
            return result
        if not any(a.metadata or a.presentation is not None for a in annotations):
            return result  # nothing to merge: the result as it is, not a copy of it (the common nested call)
        metadata = dict(result.metadata)
        presentation: str | None = None
        for annotation in annotations:
            metadata.update(annotation.metadata)
            if presentation is None and annotation.presentation is not None:
                presentation = annotation.presentation
        # An annotation's presentation replaces the result's own (contract 1.3: a preview of it).
        shown = presentation if presentation is not None else result.presentation
        return attrs.evolve(result, metadata=metadata, presentation=shown)

    # -- commands -----------------------------------------------------------------
    def command(self, request: CommandRequest, services: HostServices) -> CommandReceipt | None:
        try:
            return cast(CommandReceipt | None, self.pm.hook.agent_host_command(request=request, services=services))
        except Exception as exc:
            _log.warning("agent_host_command failed for /%s", request.name, exc_info=exc)
            text = message("host.command-failed", name=request.name, detail=f"{type(exc).__name__}: {exc}")
            return CommandReceipt(status=ReceiptStatus.FAILED, text=text)


_PlainPlan = tuple[bool, tuple[tuple[Callable[..., Any], tuple[str, ...]], ...]]
"""``(firstresult, ((function, argument names), ...))`` in pluggy's calling order (newest first)."""


def _plain_plan(caller: pluggy.HookCaller, impls: Sequence[pluggy.HookImpl]) -> _PlainPlan | None:
    """How to call ``impls`` as pluggy's multicall would, or ``None`` if that takes pluggy itself: a
    wrapper of either style, keyword arguments with defaults, or no spec."""
    spec = caller.spec
    if spec is None or spec.kwargdefaults or any(i.wrapper or i.hookwrapper or i.kwargnames for i in impls):
        return None
    functions = tuple((impl.function, tuple(impl.argnames)) for impl in reversed(impls))
    return bool(spec.opts.get("firstresult", False)), functions


async def _drive(impls: Sequence[pluggy.HookImpl], kwargs: dict[str, Any]) -> ToolResult:
    """pluggy's multicall for one firstresult hook, awaiting the innermost result if needed."""
    wrappers: list[Generator[None, Any, Any]] = []
    result: Any = None
    error: BaseException | None = None
    try:
        for impl in reversed(impls):
            args = {name: kwargs[name] for name in impl.argnames}
            if impl.wrapper:
                gen = cast(Generator[None, Any, Any], impl.function(**args))
                next(gen)  # pre-execute
                wrappers.append(gen)
                continue
            outcome = impl.function(**args)
            if inspect.isawaitable(outcome):
                outcome = await outcome
            if outcome is not None:
                result = outcome
                break
    except BaseException as exc:
        error = exc
    for gen in reversed(wrappers):  # post-execute, innermost wrapper first
        try:
            if error is not None:
                gen.throw(error)
            else:
                gen.send(result)
        except StopIteration as stop:
            result, error = stop.value, None
        except BaseException as exc:
            error = exc
        else:
            error = RuntimeError(f"wrapper {gen!r} yielded twice")
    if error is not None:
        raise error
    if not isinstance(result, ToolResult):
        raise TypeError(f"agent_host_tool_execute returned {type(result).__name__}, not ToolResult")
    return result
