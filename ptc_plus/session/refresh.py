"""``/capabilities refresh`` as a transition (ADR 0068): prepare, validate, then apply.

:func:`prepare` computes the candidate environment from the facts of now —
config, the host's tools and skills, the gate, the sandbox and statistics —
exactly as session start does, and the diff against the live plan; nothing
live is touched. :func:`validate` builds every projection the candidate would
be read through (membership and discovery index, bootstrap section, catalog
text, the model's native tools, the program's namespace, the persisted
record read back) and raises :class:`~ptc_plus.session.errors.RefreshInvalid`
naming the first that fails. Applying (persist one record, then swap the
session's state) and the safe boundary belong to the controller.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import attrs

from hookspecs import SessionInfo, TokenCounter, ToolSpec
from ptc_plus.config import Presentation
from ptc_plus.i18n import message
from ptc_plus.plan import MemberChange, PlanDiff, plan_diff
from ptc_plus.runtime import TOOL_NAME
from ptc_plus.session.environment import Environment, RefreshMark, RestoreStatus, restore
from ptc_plus.session.errors import RefreshInvalid, RefreshNotPrepared
from ptc_plus.session.membership import freeze_membership
from ptc_plus.session.opening import Today
from ptc_plus.session.presentation import InForce, decide
from ptc_plus.session.projection import MODEL_LANG, bootstrap_section
from ptc_plus.session.provision import session_plan
from ptc_plus.session.readiness import sandbox_readiness
from ptc_plus.session.view import FrozenView, freeze_view
from ptc_plus.statistics import real_workspace

_T = TypeVar("_T")


@attrs.frozen(kw_only=True)
class Candidate:
    """A prepared (and, once :func:`validate` passed, validated) refresh of one session."""

    environment: Environment
    presented: InForce
    diff: PlanDiff
    today: Today
    view: FrozenView | None = None
    """The candidate's frozen view, built once by :func:`validate` and held as is when it applies."""

    @property
    def sequence(self) -> int:
        return self.environment.sequence

    def changes(self, live: Environment, live_presentation: Presentation) -> bool:
        """Whether applying would change anything a model or a program sees."""
        return (
            not self.diff.empty
            or self.presented.presentation is not live_presentation
            or (self.environment.ptc != live.ptc)
        )


def opening_environment(
    today: Today,
    info: SessionInfo,
    counter: TokenCounter,
    parent_members: frozenset[str] | None,
    *,
    refresh: RefreshMark | None = None,
) -> tuple[Environment, InForce]:
    """The environment the facts of now give ``info`` (session start and refresh alike) and its presentation."""
    limits = today.configured.limits
    presentation = today.loaded.config.runtime.presentation
    presented = decide(presentation, today.decision, lambda: sandbox_readiness(limits))
    environment = Environment(
        ptc=presented.code_mode,
        native_reason=presented.reason,
        presentation=presentation,
        gate=today.gate,
        token_unit=counter.unit,
        plan=session_plan(
            today.catalog,
            today.loaded,
            counter,
            parent_members=parent_members,
            # Statistics are read where they are recorded: the workspace's resolved real path (ADR 0067).
            workspace=Path(real_workspace(info.workspace)),
        ),
        refresh=refresh,
    )
    return environment, presented


def prepare(
    live: Environment,
    today: Today,
    info: SessionInfo,
    counter: TokenCounter,
    parent_members: frozenset[str] | None,
) -> Candidate:
    """The candidate environment of the next refresh and its diff against ``live`` (nothing live changes).

    :raises RefreshNotPrepared: the plan could not be computed from today's facts.
    """
    try:
        environment, presented = opening_environment(today, info, counter, parent_members)
    except Exception as error:  # a bug or a broken fact must fail the refresh, never the session
        raise RefreshNotPrepared(detail=f"{type(error).__name__}: {error}") from error
    diff = plan_diff(live.plan, environment.plan)
    mark = RefreshMark(sequence=live.sequence + 1, diff=diff)
    return Candidate(environment=attrs.evolve(environment, refresh=mark), presented=presented, diff=diff, today=today)


def validate(candidate: Candidate, view: Sequence[ToolSpec], counter: TokenCounter) -> Candidate:
    """Build every projection of ``candidate``; the candidate with its frozen view, or the first failure.

    :param view: the host's tools for the agent now (without ``run_code``).
    :raises RefreshInvalid: naming the projection that failed and why.
    """
    environment, today = candidate.environment, candidate.today
    code_mode = candidate.presented.code_mode
    membership = _projection(
        "runtime",
        lambda: freeze_membership(
            environment,
            today.catalog,
            today.skills,
            counter,
            direct=candidate.presented.presentation is Presentation.BOTH,
            code_mode=code_mode,
            discovery_budget=today.loaded.config.context.discovery_tokens,
        ),
    )
    frozen = FrozenView(membership=membership)
    if code_mode:
        _projection("prompt", bootstrap_section)
        frozen = _projection(
            "catalog",
            lambda: freeze_view(
                environment,
                today.catalog,
                today.skills,
                counter,
                presentation=candidate.presented.presentation,
                code_mode=code_mode,
                context=today.loaded.config.context,
                membership=membership,
            ),
        )
        run_code = ToolSpec(name=TOOL_NAME, description="")
        native = _projection("native-tools", lambda: membership.native_tools([*view, run_code]))
        if TOOL_NAME not in native:
            raise RefreshInvalid(projection="native-tools", detail=f"{TOOL_NAME} would not be offered")
        _projection("discovery", lambda: membership.snapshot and membership.snapshot.catalog.capabilities)
        _projection("runtime", lambda: membership.program_view(view))
    restored = _projection("record", lambda: restore([environment.to_record()]))
    if restored.status is not RestoreStatus.RESTORED or restored.environment != environment:
        detail = restored.detail or "the record does not read back as the same plan"
        raise RefreshInvalid(projection="record", detail=detail)
    return attrs.evolve(candidate, view=frozen)


def _projection(name: str, build: Callable[[], _T]) -> _T:
    try:
        return build()
    except RefreshInvalid:
        raise
    except Exception as error:
        raise RefreshInvalid(projection=name, detail=f"{type(error).__name__}: {error}") from error


def diff_summary(
    diff: PlanDiff, lang: str | None = None, *, presentation: tuple[Presentation, Presentation] | None = None
) -> str:
    """The diff as one line for the person: added, turned off, changed, revised (``no change``)."""
    parts: list[str] = []
    if presentation is not None and presentation[0] is not presentation[1]:
        parts.append(message("ptc.refresh.presentation", lang, before=presentation[0], after=presentation[1]))
    parts += _parts(diff, lang, "ptc.refresh.{}")
    return message("ptc.refresh.join-groups", lang).join(parts) or message("ptc.refresh.none", lang)


def notice_header(sequence: int, diff: PlanDiff) -> str:
    """The head of the refresh notice the model receives (English: the prompt must not vary by user)."""
    lines = [message("ptc.refresh.notice", MODEL_LANG, sequence=sequence)]
    lines += _parts(diff, MODEL_LANG, "ptc.refresh.notice-{}", names=True)
    return "\n".join(lines)


def _parts(diff: PlanDiff, lang: str | None, key: str, *, names: bool = False) -> list[str]:
    """One text per non-empty group, from the message ``key.format(group)``."""
    separator = message("ptc.refresh.join-names", lang)
    groups = (("added", diff.added), ("removed", diff.removed), ("changed", diff.changed), ("revised", diff.revised))
    return [
        message(
            key.format(group), lang, names=separator.join(_member(c, lang, group == "changed", names) for c in changes)
        )
        for group, changes in groups
        if changes
    ]


def _member(change: MemberChange, lang: str | None, moved: bool, names: bool) -> str:
    """A member as the model calls it (its name) or as the person configures it (its identity)."""
    label = (change.name or change.identity) if names else change.identity
    if not moved:
        return label

    def shown(disclosure: object) -> str:
        return str(disclosure) if disclosure is not None else message("ptc.refresh.absent", lang)

    return message("ptc.refresh.move", lang, name=label, before=shown(change.before), after=shown(change.after))
