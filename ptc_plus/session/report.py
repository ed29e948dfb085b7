"""The ``/capabilities`` receipts (users only): the plan shown, and the receipts of a refresh.

``/capabilities`` is read-only: it shows what the session froze at start (or
restored, or last refreshed), what is in force now (the gate and the sandbox
are checked again on resume, ADR 0053), whether the catalog reached the
model, what the on-demand navigation costs (ADR 0054), and what a refresh
now would change (or the refresh that waits for a running cell). Showing
never changes the live plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

from hookspecs import CommandReceipt, CommandSpec, ReceiptStatus, SessionRecord
from hookspecs.serialization import unstructure
from ptc_plus.config import Disclosure, Presentation
from ptc_plus.errors import PtcError
from ptc_plus.i18n import message
from ptc_plus.plan import CapabilityPlan, reason_text
from ptc_plus.session.delivery import Delivery, Shown
from ptc_plus.session.environment import KIND_PREFIX, Environment
from ptc_plus.session.presentation import BY_CONFIG, SANDBOX_UNAVAILABLE, InForce
from ptc_plus.session.projection import Navigation

if TYPE_CHECKING:
    from ptc_plus.session.refresh import Candidate

COMMAND = "capabilities"
REFRESH = "refresh"


def command_specs() -> list[CommandSpec]:
    return [CommandSpec(name=COMMAND, summary=message("ptc.command.capabilities"))]


def native_reason_text(reason: str, lang: str | None = None, detail: str = "") -> str:
    """The stable native-reason token (``presentation``, ``gate:<reason>``, ``sandbox-unavailable``) as text."""
    if reason.startswith("gate:"):
        token = reason.removeprefix("gate:")
        try:  # the gate's words for its stable token (``mode-off`` -> "PTC_MODE is off")
            words = message(f"gate.reason.{token}", lang)
        except KeyError:  # a reason token newer than this catalog: still say it was the gate
            words = token
        text = message("ptc.native.gate", lang, reason=words)
    elif reason == SANDBOX_UNAVAILABLE:
        text = message("ptc.native.sandbox-unavailable", lang)
    elif reason == BY_CONFIG:
        text = message("ptc.native.presentation", lang)
    else:
        text = reason
    return message("ptc.native.detail", lang, reason=text, detail=detail) if detail else text


@attrs.frozen(kw_only=True)
class SessionView:
    """What ``/capabilities`` reports besides the frozen environment: the facts of now.

    :ivar presented: the presentation in force and why.
    :ivar direct: under ``both``, the tools also offered directly (host order).
    :ivar delivery: what the surface carries under the catalog's provenance.
    :ivar navigation: the catalog's on-demand navigation and its cost (code mode only).
    :ivar unit: the token unit of ``navigation``.
    :ivar gate_warnings: the gate's warnings when it was last evaluated.
    :ivar late: tools the host added after the membership froze: not offered until refresh (ADR 0056).
    :ivar pending: ``(sequence, summary, waiting)``: the refresh waiting for a running cell
        (``waiting``), else what a refresh now would change (``None``: no plan to refresh).
    :ivar refresh_failure: why the latest pending refresh failed when it was applied.
    """

    presented: InForce
    direct: tuple[str, ...] = ()
    late: tuple[str, ...] = ()
    delivery: Delivery = attrs.field(factory=Delivery)
    navigation: Navigation | None = None
    unit: str = ""
    gate_warnings: tuple[str, ...] = ()
    pending: tuple[int, str, bool] | None = None
    refresh_failure: str = ""


def plan_lines(plan: CapabilityPlan, unit: str, lang: str | None = None) -> list[str]:
    """Summary, budget line, the damaged statistics store if any, and one line per capability with its
    reason (token counts in ``unit``): a reason statistics decided, or could not, names the scope, the
    families that used it of those where it was available (the samples), the coverage, the window and
    the fallback cause."""
    on, off = message("ptc.report.on", lang), message("ptc.report.off", lang)
    lines = [
        message(
            "ptc.report.plan",
            lang,
            revision=plan.config_revision.removeprefix("sha256:")[:12],
            management=on if plan.management else off,
            statistics=message(f"plan.statistics.{plan.statistics}", lang),
            full=len(plan.with_disclosure(Disclosure.FULL)),
            on_demand=len(plan.with_disclosure(Disclosure.ON_DEMAND)),
            off=len(plan.with_disclosure(Disclosure.OFF)),
            absent=len(plan.with_disclosure(None)),
        ),
        message(
            "ptc.report.budget",
            lang,
            used=plan.used_tokens,
            budget=plan.budget_tokens,
            unit=unit,
            overage=plan.overage_tokens,
        ),
    ]
    if plan.statistics_detail:
        lines.append(message("ptc.report.statistics-detail", lang, detail=plan.statistics_detail))
    for entry in plan.entries:
        key = "ptc.report.entry-overage" if entry.overage else "ptc.report.entry"
        disclosure = entry.disclosure.value if entry.disclosure is not None else message("ptc.report.absent", lang)
        lines.append(
            message(
                key,
                lang,
                identity=entry.identity,
                disclosure=disclosure,
                reason=reason_text(entry, lang),
            )
        )
    return lines


def capabilities_receipt(
    environment: Environment | None, diagnostics: Sequence[str], view: SessionView
) -> CommandReceipt:
    """The receipt of ``/capabilities`` for a session holding ``environment`` (``None``: host provision)."""
    presented = view.presented
    if environment is None:
        lines = [message("ptc.report.no-environment")]
        data: dict[str, Any] = {"environment": None}
    else:
        lines = [_head(view), _source(presented), *plan_lines(environment.plan, environment.token_unit)]
        lines += [message("ptc.report.gate-warning", warning=w) for w in view.gate_warnings]
        if view.late:
            lines.append(message("ptc.report.late", names=", ".join(view.late)))
        lines += _refresh_lines(environment, view)
        data = {"environment": environment.payload()}
    data["presentation"] = {
        "in_force": presented.presentation.value,
        "configured": presented.configured.value if presented.configured is not None else None,
        "reason": presented.reason,
        "detail": presented.detail,
        "checked": presented.checked.value,
        "direct": list(view.direct),
        "late": list(view.late),
    }
    if view.pending is not None:
        sequence, summary, waiting = view.pending
        data["refresh"] = {"next": sequence, "pending": waiting, "summary": summary, "failure": view.refresh_failure}
    lines += _catalog_lines(view)
    data["catalog"] = {
        "shown": view.delivery.shown.value,
        "next": _next(view),
        "navigation": _navigation_data(view),
    }
    lines.extend(diagnostics)
    data["diagnostics"] = list(diagnostics)
    return CommandReceipt(status=ReceiptStatus.SHOWN, text="\n".join(lines), data=data)


def _refresh_lines(environment: Environment, view: SessionView) -> list[str]:
    lines: list[str] = []
    if environment.refresh is not None:
        lines.append(message("ptc.report.refreshed", sequence=environment.sequence))
    if view.refresh_failure:
        lines.append(message("ptc.report.refresh-failed", reason=view.refresh_failure))
    if view.pending is not None:
        sequence, summary, waiting = view.pending
        key = "ptc.report.refresh-pending" if waiting else "ptc.report.pending-diff"
        lines.append(message(key, sequence=sequence, summary=summary))
    return lines


def refresh_receipt(status: ReceiptStatus, text: str, subject: Candidate | PtcError | None = None) -> CommandReceipt:
    """The receipt of ``/capabilities refresh``: its status, and in ``data`` the refresh number and diff
    (a candidate) or the error (a failure)."""
    data: dict[str, Any] = {"status": status.value}
    if isinstance(subject, PtcError):
        data["error"] = subject.to_json()
    elif subject is not None:
        data["refresh"] = subject.sequence
        data["diff"] = unstructure(subject.diff)
    return CommandReceipt(status=status, text=text, data=data)


def turned_off_from(records: Sequence[SessionRecord]) -> dict[str, int]:
    """Tool name -> the refresh that turned it off, from the session's environment records (oldest first);
    a later refresh that made it callable again takes it out."""
    found: dict[str, int] = {}
    for record in records:
        if not record.kind.startswith(KIND_PREFIX) or not isinstance(record.payload, dict):
            continue
        mark = record.payload.get("refresh")
        if not isinstance(mark, dict) or not isinstance(diff := mark.get("diff"), dict):
            continue
        sequence = mark.get("sequence")
        for change in diff.get("added") or ():
            if isinstance(change, dict):
                found.pop(str(change.get("name", "")), None)
        for change in diff.get("removed") or ():
            if isinstance(change, dict) and change.get("name") and isinstance(sequence, int):
                found[str(change["name"])] = sequence
    return found


def _navigation_data(view: SessionView) -> dict[str, Any] | None:
    nav = view.navigation
    if nav is None:
        return None
    return {"listed": nav.listed, "total": nav.total, "tokens": nav.tokens, "bound": nav.bound, "unit": view.unit}


def _head(view: SessionView) -> str:
    presented = view.presented
    if presented.presentation is Presentation.PTC:
        return message("ptc.report.code-on")
    if presented.presentation is Presentation.BOTH:
        names = ", ".join(view.direct) or message("ptc.report.none")
        return message("ptc.report.code-both", names=names)
    return message("ptc.report.native", reason=native_reason_text(presented.reason, detail=presented.detail))


def _source(presented: InForce) -> str:
    configured = presented.configured or Presentation.PTC
    checked = message(f"ptc.report.checked.{presented.checked.value}")
    return message("ptc.report.presentation", configured=configured.value, checked=checked)


def _next(view: SessionView) -> str | None:
    wanted = view.delivery.wanted(view.presented.code_mode)
    return wanted.value if wanted is not None else None


def _catalog_lines(view: SessionView) -> list[str]:
    shown, wanted = view.delivery.shown, view.delivery.wanted(view.presented.code_mode)
    lines: list[str] = []
    if wanted is Shown.CATALOG:
        lines.append(message("ptc.report.catalog.pending"))
    elif wanted is Shown.NOTICE:
        lines.append(message("ptc.report.catalog.withdrawing"))
    elif shown is Shown.CATALOG:
        lines.append(message("ptc.report.catalog.delivered"))
    elif shown is Shown.NOTICE:
        lines.append(message("ptc.report.catalog.withdrawn"))
    nav = view.navigation
    if nav is not None and nav.total:
        lines.append(
            message(
                "ptc.report.navigation" if nav.listed < nav.total else "ptc.report.navigation-all",
                listed=nav.listed,
                total=nav.total,
                tokens=nav.tokens,
                bound=nav.bound,
                unit=view.unit,
            )
        )
    return lines
