"""The hookspecs of the host contract, grouped by lifecycle phase.

Every docstring follows one template: a summary line; ``:param:`` for each
argument; ``:returns:``; **Result** (how results combine: all results, or
first non-``None``); **Called** (when, and in what order relative to other
seams); **Raises** (what an implementation may raise and what the host does
with it). Hosts call these only through a typed façade.

Contract 1.1 (ADR 0055) adds, compatibly with 1.0 plugins (pluggy passes an
implementation only the arguments it names): ``services`` for the prompt-side
hooks, :attr:`~hookspecs.types.SkillSpec.loader`, :attr:`~hookspecs.services.ToolContext.body`
and the :func:`~hookspecs.services.tool` helper.

Contract 1.2 (ADR 0065) adds the fact that a session family has settled:
:func:`agent_host_family_settled` with :class:`~hookspecs.types.FamilySettlement`.
A host implementing 1.1 never calls it; a plugin must then take no family
as settled (see the hook).

Contract 1.3 (ADR 0068) adds :attr:`~hookspecs.types.ReceiptStatus.UNCHANGED`
(a change command found nothing to change), which context messages survive a
compaction (:attr:`~hookspecs.types.CompactionInfo.kept_provenances`, ADR 0070)
and the result metadata a host sets when it already cut a presentation
(ADR 0069). A plugin reading these from a 1.2 host finds the defaults.

Contract 1.5 (ADR 0116) adds the optional child-agents service (:mod:`hookspecs.children`).

Contract 1.6 (ADR 0125) adds :func:`agent_host_turn_started` with
:class:`~hookspecs.types.TurnStart`: the plugin learns the user's message of
the turn about to run, and any right the host grants for that turn alone.
A 1.5 host never calls it; a plugin must then offer nothing that needs it
(PTC Plus then never offers the ``ralph`` tool: ``/ralph`` stays the way).

Contract 1.7 (ADR 0133) adds :func:`agent_host_turn_ended`: every turn whose
start was reported ends with it, however it ended (settled, failed,
cancelled), so what a plugin granted for a turn ends with the turn.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence

from hookspecs.markers import hookspec
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
    Refusal,
    ResultAnnotation,
    SessionInfo,
    StepInfo,
    ToolCall,
    ToolResult,
    ToolSpec,
    TurnStart,
    TurnSummary,
)

CONTRACT_VERSION = "1.7"
"""The version of this contract: ``major.minor``; a minor version only adds what 1.0 plugins may ignore.

1.5 added the optional child-agents service (:mod:`hookspecs.children`, ADR 0116); 1.6 the turn's start
(:func:`agent_host_turn_started`, ADR 0125); 1.7 the turn's end however it ended
(:func:`agent_host_turn_ended`, ADR 0133)."""

# --- Registration -----------------------------------------------------------


@hookspec
def agent_host_tools(agent: AgentRef, services: HostServices) -> Sequence[ToolDefinition]:
    """Contribute tools (contract and body) to an agent's tool view.

    :param agent: The agent whose view is being built.
    :param services: The host services.
    :returns: Tool definitions; names must not collide with host tools or
        other plugins' tools.
    **Result**: all results, concatenated in hook-call order.
    **Called**: whenever the host builds ``agent``'s tool view: at session
        start, on resume, on fork, and before every model step.
    **Raises**: nothing should be raised; an exception aborts view building
        and surfaces to the host's caller.
    """
    raise NotImplementedError


@hookspec
def agent_host_commands() -> Sequence[CommandSpec]:
    """Declare slash commands this plugin handles.

    :returns: Command specs (``name`` without the slash).
    **Result**: all results, concatenated; the host lists them in ``/help``.
    **Called**: once when the host builds its command table (after loading).
    **Raises**: nothing.
    """
    raise NotImplementedError


# --- Session lifecycle (maintenance) ----------------------------------------


@hookspec
def agent_host_session_start(session: SessionInfo, services: HostServices) -> None:
    """A new session (root or child agent) has started.

    :param session: The new session's facts.
    :param services: The host services; ``append_record`` persists into this session.
    :returns: Nothing.
    **Result**: all implementations run.
    **Called**: once per new session, after the host persisted its start
        event and before its first model step; not called on resume.
    **Raises**: an exception aborts the session start.
    """


@hookspec
def agent_host_session_resume(session: SessionInfo, services: HostServices) -> None:
    """A persisted session was reopened and its history rebuilt from the log.

    :param session: The resumed session's facts.
    :param services: The host services; ``read_records`` returns what was persisted.
    :returns: Nothing.
    **Result**: all implementations run.
    **Called**: once per resume, after the log was replayed (and any torn
        tail reported) and before the next model step.
    **Raises**: an exception aborts the resume.
    """


@hookspec
def agent_host_agent_fork(parent: SessionInfo, child: SessionInfo, services: HostServices) -> None:
    """A child agent was forked from ``parent``; it joins the parent's session family.

    :param parent: The parent session.
    :param child: The child session (``child.agent.family_id == parent.agent.family_id``).
    :param services: The host services.
    :returns: Nothing.
    **Result**: all implementations run.
    **Called**: after the child's start event is persisted and before
        ``agent_host_session_start`` for the child.
    **Raises**: an exception aborts the fork.
    """


@hookspec
def agent_host_turn_started(turn: TurnStart, services: HostServices) -> None:
    """A user turn is about to run: its user message and the host's grants for it (contract 1.6).

    The one seam where a plugin sees what the *user* asked in this turn (the
    model's requests never carry it): a plugin may offer a tool for this turn
    only because the user asked for it — PTC Plus offers ``ralph`` only in a
    turn whose user text requests Ralph or whose grants name ``"ralph"``
    (ADR 0125). What a plugin decides here holds until the turn ends:
    ``agent_host_turn_ended`` (1.7), called however the turn ended; a host
    of 1.6 reports only a settled turn's end, so there the next turn's start
    is the only bound after a failed one.

    :param turn: The agent, the turn's number, the user's message and the host's grants.
    :param services: The host services.
    :returns: Nothing.
    **Result**: all implementations run.
    **Called**: once per user turn, before anything of the turn: before the
        first step's ``agent_host_context_messages``, before its tool view is
        built (``agent_host_tools``) and before the user message is persisted.
        Never for a direct call outside a turn, nor for a command. A host of
        contract 1.5 or older never calls it: a plugin must then take no turn
        as having asked for anything.
    **Raises**: an exception aborts the turn before its first model request (nothing of it is persisted).
    """


@hookspec
def agent_host_turn_ended(agent: AgentRef, turn: int, services: HostServices) -> None:
    """A user turn whose start was reported is over, however it ended (contract 1.7, ADR 0133).

    The bound of what ``agent_host_turn_started`` decided: a right granted
    for the turn (PTC Plus's ``ralph`` grant) must not outlive it, and a
    failed or cancelled turn never settles, so ``agent_host_turn_settled``
    cannot be that bound.

    :param agent: The session the turn belonged to.
    :param turn: The turn's number (as :attr:`~hookspecs.types.TurnStart.turn`).
    :param services: The host services.
    :returns: Nothing.
    **Result**: all implementations run.
    **Called**: exactly once for each turn whose ``agent_host_turn_started``
        returned, when the turn settled (after ``agent_host_turn_settled``),
        failed or was cancelled; before the host does anything else for the
        session (a direct call, a command, its next turn) and before
        ``agent_host_family_settled`` of the settlement the turn's end makes.
        Never for a turn whose start hook raised. A host of 1.6 or older
        never calls it.
    **Raises**: exceptions are reported by the host and change nothing of the turn's outcome.
    """


@hookspec
def agent_host_turn_settled(summary: TurnSummary, services: HostServices) -> None:
    """A user turn ended: the model answered without further tool calls.

    :param summary: What the turn took.
    :param services: The host services.
    :returns: Nothing.
    **Result**: all implementations run.
    **Called**: after the final assistant message is persisted; before
        ``agent_host_family_settled`` when this turn's end settles its family.
        It says nothing about the agent's family: use that hook (1.2) for it.
    **Raises**: exceptions are reported by the host and do not undo the turn.
    """


@hookspec
def agent_host_family_settled(family: FamilySettlement, services: HostServices) -> None:
    """A session family has settled: its root and every descendant are at rest (contract 1.2).

    An agent is *live* while the host does work for it: a turn in progress
    (from its user message until it settles, fails or is cancelled) or a call
    the host dispatches on its behalf outside a turn. A family settles when
    work of one of its agents ends and then no agent of the family is live,
    wherever the agents work (each member's workspace is its own). Agents
    merely created are not live; one given work later makes the family live
    again, and its next settlement revises this one (a higher
    ``family.generation``, the same ``family_id``), as does new work after a
    resume. A family in which no agent ever started never settles.

    A host that cannot prove a boundary (an agent of the family may be
    running where it cannot see, its lineage cannot be read) does not call
    this hook. A host implementing contract 1.1 never calls it: a plugin
    must then treat every family as unsettled — record no sample, and never
    infer settlement from ``agent_host_turn_settled``, a resume or shutdown.

    :param family: The family: id, root, every member (agent, workspace,
        whether it started) and the settlement's generation.
    :param services: The host services.
    :returns: Nothing.
    **Result**: all implementations run.
    **Called**: once per settlement, after the host persisted it and after
        ``agent_host_turn_settled`` of the turn whose end settled the family;
        never while an agent of the family is live, never for a family none
        of whose agents started, never once ``agent_host_shutdown`` began.
    **Raises**: exceptions are reported by the host and do not undo the settlement.
    """


@hookspec
def agent_host_compaction(compaction: CompactionInfo, services: HostServices) -> None:
    """The model-visible surface was replaced by a compaction summary.

    Context messages to re-deliver (for example recovered contracts) are
    returned from the next ``agent_host_context_messages`` call. Since 1.3 the
    host says which context messages survived (``kept_provenances``: their
    provenances; the others are gone from the surface); ``None`` (a 1.2 host)
    means it does not say, and a plugin assumes none survived.

    :param compaction: The summary, which tool calls and (since 1.3) which context messages stay visible.
    :param services: The host services.
    :returns: Nothing.
    **Result**: all implementations run.
    **Called**: after the compaction event is persisted.
    **Raises**: exceptions are reported and do not undo the compaction.
    """


@hookspec
def agent_host_shutdown(services: HostServices) -> Awaitable[None] | None:
    """The host is shutting down or unloading plugins.

    :param services: The host services.
    :returns: ``None``, or an awaitable that finishes the plugin's shutdown.
    **Result**: all implementations run; the host then awaits every returned
        awaitable before it closes sessions.
    **Called**: once; a plugin must refuse new work and abort and await its
        live work (for example running programs).
    **Raises**: exceptions (also from the awaitables) are reported; shutdown continues.
    """


# --- Model step ---------------------------------------------------------------


@hookspec
def agent_host_prompt_sections(context: PromptContext, services: HostServices) -> Sequence[PromptSection]:
    """Contribute named sections to the system prompt.

    The text must obey the stable-prefix rule: identical configuration,
    model route and host tool view give byte-identical sections.

    :param context: The agent, model route, tool view and workspace.
    :param services: The host services (since 1.1), so per-session state is found through them.
    :returns: Sections; the host sorts all sections, its own included, by ``(order, name)``.
    **Result**: all results, concatenated, then sorted.
    **Called**: before every model request, after ``agent_host_skill_catalog``; the host
        builds its own sections outside this hook, so no implementation calls another hook.
    **Raises**: an exception aborts the step.
    """
    raise NotImplementedError


@hookspec(firstresult=True)
def agent_host_model_tools(context: PromptContext, services: HostServices) -> Sequence[str] | None:
    """Choose which tools of the view are offered natively to the model, in order.

    Tools left out stay in the agent's view: callable through nested
    dispatch, but not presented as the model's own function tools, and a
    model's direct call to one is refused as an unknown tool. Like prompt
    sections, the choice must obey the stable-prefix rule.

    :param context: The agent, model route, tool view and workspace.
    :param services: The host services (since 1.1).
    :returns: Ordered tool names (unknown names are ignored), or ``None``
        to offer the whole view in host order.
    **Result**: stops at the first non-``None`` result.
    **Called**: before every model request, after ``agent_host_prompt_sections``.
    **Raises**: an exception aborts the step.
    """


@hookspec(firstresult=True)
def agent_host_skill_catalog(context: PromptContext, services: HostServices) -> Sequence[str] | None:
    """Choose which skills the host lists in its own skill catalog prompt section.

    A plugin that delivers skill catalog lines itself (for example through a
    context message governed by a capability plan) returns the names the host
    should still list — usually none. Like prompt sections, the choice must
    obey the stable-prefix rule. Skills left out stay loadable unless a guard
    refuses a call of their :attr:`~hookspecs.types.SkillSpec.loader`.

    :param context: The agent, model route, tool view and workspace.
    :param services: The host services (since 1.1).
    :returns: Skill names to list (unknown names are ignored), or ``None``
        to list every skill the host offers the agent.
    **Result**: stops at the first non-``None`` result.
    **Called**: before every model request, before ``agent_host_prompt_sections``
        (the host builds its skill section from the answer, outside any hook).
    **Raises**: an exception aborts the step.
    """


@hookspec
def agent_host_context_messages(step: StepInfo, services: HostServices) -> Sequence[ContextMessage]:
    """Commit model-visible context messages at an accepted model step.

    Returned messages are persisted in the session log, placed after the
    protected system head and before new work, and rebuilt on resume. A
    message supersedes any earlier one with the same ``provenance`` on the
    model-visible surface.

    :param step: The step about to be sent to the model.
    :param services: The host services.
    :returns: Messages to commit now (usually empty).
    **Result**: all results, concatenated in hook-call order.
    **Called**: once per model step, after the step is accepted and before
        the model request is built.
    **Raises**: an exception aborts the step; nothing is committed.
    """
    raise NotImplementedError


# --- Tool dispatch ------------------------------------------------------------


@hookspec(firstresult=True)
def agent_host_guard(call: ToolCall, spec: ToolSpec, services: HostServices) -> Refusal | None:
    """Approve or refuse a call before dispatch (top-level and nested alike).

    :param call: The call, arguments already validated.
    :param spec: The tool's contract at dispatch time.
    :param services: The host services.
    :returns: A :class:`Refusal` to refuse, ``None`` to let it through.
    **Result**: stops at the first non-``None`` result.
    **Called**: after schema validation, before ``agent_host_tool_execute``.
    **Raises**: an exception refuses the call with code ``guard-error``.
    """


@hookspec(firstresult=True)
def agent_host_tool_execute(call: ToolCall, spec: ToolSpec, context: ToolContext) -> ToolResult | None:
    """Run a tool call; wrap it to observe or change pre/post-execute behaviour.

    The host's own implementation (registered last, ``trylast``) runs the
    tool body, which it finds on ``context.body`` (since 1.1). Plugins use
    ``wrapper=True`` implementations: code before
    ``yield`` is pre-execute, the ``yield`` returns the body's
    :class:`ToolResult` (or raises), code after it is post-execute.

    :param call: The call (arguments validated, guard passed).
    :param spec: The tool's contract read at dispatch time.
    :param context: Services, the cancellation signal and (since 1.1) the body.
    :returns: The settled result.
    **Result**: stops at the first non-``None`` result.
    **Called**: inside the scheduler slot of the call: an ``exclusive`` tool
        holds the pool until the whole wrapper chain returned.
    **Raises**: exceptions become an error result with code ``tool-exception``.
    """


@hookspec
def agent_host_tool_result(call: ToolCall, result: ToolResult, services: HostServices) -> ResultAnnotation | None:
    """See a settled result before it enters model history.

    :param call: The call.
    :param result: The canonical result; its ``value`` is never altered.
        Its ``metadata`` is what the host set (contract 1.3:
        :data:`~hookspecs.services.PRESENTATION_TRUNCATED` when the host
        already truncated or previewed the presentation itself: leave it alone).
    :param services: The host services.
    :returns: An annotation: ``metadata`` is merged into the result (later
        keys win), ``presentation`` replaces what the model sees (also a
        presentation the result already carried). A hook that replaces it
        with a preview of a longer text sets ``PRESENTATION_TRUNCATED`` and,
        when the rest is in the host's spill store,
        :data:`~hookspecs.services.SPILL_HANDLE` (contract 1.3): the host
        then keeps that spill readable while the result is on the surface.
    **Result**: all results; metadata merged in hook-call order; the first
        non-``None`` presentation wins.
    **Called**: once per settled top-level or nested call, in commit order;
        a call whose dispatch was cancelled (its outer call timed out or was
        aborted, or the host shut down) settles when the cancellation does,
        possibly before calls submitted earlier.
    **Raises**: exceptions are reported; the result enters history unannotated.
    """


# --- Commands -----------------------------------------------------------------


@hookspec(firstresult=True)
def agent_host_command(request: CommandRequest, services: HostServices) -> CommandReceipt | None:
    """Handle a slash command typed by a human, without any model request.

    :param request: The command name (no slash), its arguments and the agent.
    :param services: The host services.
    :returns: A receipt, or ``None`` when the command is not this plugin's.
    **Result**: stops at the first non-``None`` result.
    **Called**: when the user's input starts with ``/``; never during a model step.
    **Raises**: an exception gives a ``failed`` receipt.
    """
