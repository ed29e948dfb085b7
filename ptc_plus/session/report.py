"""The ``/capabilities`` receipt: the session's plan, reasons, overage and why it is native (users only).

Read-only: it shows what the session froze at start (or restored), never
recomputes and never refreshes.
"""

from __future__ import annotations

from collections.abc import Sequence

from hookspecs import CommandReceipt, CommandSpec, ReceiptStatus
from hookspecs.i18n import message
from ptc_plus.config import Disclosure
from ptc_plus.plan import CapabilityPlan, reason_text
from ptc_plus.session.environment import Environment

COMMAND = "capabilities"


def command_specs() -> list[CommandSpec]:
    return [CommandSpec(name=COMMAND, summary=message("ptc.command.capabilities"))]


def native_reason_text(reason: str, lang: str | None = None) -> str:
    """The stable native-reason token (``gate:<reason>``, ``sandbox-unavailable``) as text."""
    if reason.startswith("gate:"):
        return message("ptc.native.gate", lang, reason=reason.removeprefix("gate:"))
    if reason == "sandbox-unavailable":
        return message("ptc.native.sandbox-unavailable", lang)
    return reason


def plan_lines(plan: CapabilityPlan, unit: str, lang: str | None = None) -> list[str]:
    """Summary, budget line and one line per capability with its reason (token counts in ``unit``)."""
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
    for entry in plan.entries:
        key = "ptc.report.entry-overage" if entry.overage else "ptc.report.entry"
        disclosure = entry.disclosure.value if entry.disclosure is not None else message("ptc.report.absent", lang)
        lines.append(
            message(key, lang, identity=entry.identity, disclosure=disclosure, reason=reason_text(entry, lang))
        )
    return lines


def capabilities_receipt(environment: Environment | None, diagnostics: Sequence[str]) -> CommandReceipt:
    """The receipt of ``/capabilities`` for a session holding ``environment`` (``None``: host provision)."""
    if environment is None:
        lines = [message("ptc.report.no-environment")]
        data: dict[str, object] = {"environment": None}
    else:
        head = (
            message("ptc.report.code-on")
            if environment.ptc
            else message("ptc.report.native", reason=native_reason_text(environment.native_reason))
        )
        lines = [head, *plan_lines(environment.plan, environment.token_unit)]
        lines += [message("ptc.report.gate-warning", warning=w) for w in environment.gate.warnings]
        data = {"environment": environment.payload()}
    lines.extend(diagnostics)
    data["diagnostics"] = list(diagnostics)
    return CommandReceipt(status=ReceiptStatus.SHOWN, text="\n".join(lines), data=data)
