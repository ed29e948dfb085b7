"""Which presentation is in force for a session, and why (ADR 0053).

The configured presentation (``[runtime] presentation``) is frozen with the
session's environment; the gate and the sandbox are facts of the moment they
are checked — at session start, and again at every resume. Code mode
(``ptc`` or ``both``) is in force only when the configuration asks for it,
the gate lets PTC through and the sandbox policy is satisfiable here;
otherwise the session is presented natively and the reason is kept for
``/capabilities``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable

import attrs

from ptc_plus.config import Presentation
from ptc_plus.gate import GateDecision
from ptc_plus.session.readiness import Readiness

BY_CONFIG = "presentation"
"""Native reason token: the configuration chose ``native``."""
SANDBOX_UNAVAILABLE = "sandbox-unavailable"
RESTORE_PREFIX = "restore:"
"""Native reason prefix: no proven environment (``restore:missing``, ``restore:corrupt``, ``restore:unsupported``)."""


class Checked(enum.StrEnum):
    """When the gate and the sandbox were last checked for the session."""

    START = "start"
    RESUME = "resume"


@attrs.frozen(kw_only=True)
class InForce:
    """The presentation a session gets now.

    :ivar presentation: ``ptc``, ``both`` or ``native``.
    :ivar reason: stable token, non-empty exactly when a configured code-mode
        presentation was overruled or ``native`` was configured:
        ``presentation``, ``gate:<reason>``, ``sandbox-unavailable`` or
        ``restore:<status>``.
    :ivar detail: free text behind the reason (for example the sandbox probe's answer).
    :ivar configured: what the session's environment asks for (``None``: no environment).
    """

    presentation: Presentation
    reason: str = ""
    detail: str = ""
    configured: Presentation | None = None
    checked: Checked = Checked.START

    @property
    def code_mode(self) -> bool:
        return self.presentation is not Presentation.NATIVE


def decide(
    configured: Presentation,
    gate: GateDecision,
    readiness: Callable[[], Readiness],
    checked: Checked = Checked.START,
) -> InForce:
    """Configured presentation, gated by today's gate and today's sandbox (probed only when it matters)."""
    if configured is Presentation.NATIVE:
        return InForce(presentation=Presentation.NATIVE, reason=BY_CONFIG, configured=configured, checked=checked)
    if not gate.enabled:
        reason = f"gate:{gate.reason}"
        return InForce(presentation=Presentation.NATIVE, reason=reason, configured=configured, checked=checked)
    ready = readiness()
    if not ready.usable:
        return InForce(
            presentation=Presentation.NATIVE,
            reason=ready.reason or SANDBOX_UNAVAILABLE,
            detail=ready.detail,
            configured=configured,
            checked=checked,
        )
    return InForce(presentation=configured, configured=configured, checked=checked)


def unproven(status: str) -> InForce:
    """A resumed session without a proven environment (``status``: missing, corrupt, unsupported) stays native."""
    return InForce(presentation=Presentation.NATIVE, reason=RESTORE_PREFIX + status, checked=Checked.RESUME)
