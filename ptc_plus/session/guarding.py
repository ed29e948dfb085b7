"""Guarding: under code mode nobody reaches what the session's plan keeps out, at any depth.

Not a program crafting a name, not a model (or a crafted call) naming one at
the top level (defence in depth). A skill the plan leaves out does not load
through its host's loader, whatever its name; a resource server it keeps out
is not read. A child's plan stays bounded by its ancestors' plans as they are now.
"""

from __future__ import annotations

from hookspecs import HostServices, Refusal, ToolCall, ToolSpec
from ptc_plus.i18n import message
from ptc_plus.session.projection import MODEL_LANG
from ptc_plus.session.table import SessionTable


class Guard:
    """The ``guard`` seam of one controller's sessions."""

    def __init__(self, services: HostServices, table: SessionTable) -> None:
        self._services = services
        self._table = table

    def guard(self, call: ToolCall, spec: ToolSpec) -> Refusal | None:
        """A refusal (``capability-off``, saying why) for ``call`` of ``spec``, or ``None`` to let it run."""
        state = self._table.coded(call.caller)
        if state is None or state.membership is None:
            return None
        membership = state.membership
        if not membership.reaches(spec.name):
            sequence = state.turned_off.get(spec.name)
            if sequence is not None:
                # A held name (a model's memory, a program's crafted call) after a refresh turned it off.
                reason = message("ptc.guard.off-by-refresh", MODEL_LANG, tool=spec.name, sequence=sequence)
            elif spec.name not in membership.known:
                # Added by the host after the plan froze: not in the plan at all, not "off" in it (ADR 0056).
                reason = message("ptc.guard.not-in-plan", MODEL_LANG, tool=spec.name)
            else:
                reason = message("ptc.guard.off", MODEL_LANG, tool=spec.name)
            return Refusal(code="capability-off", reason=reason)
        if self._table.parent_refuses(state, spec.name):
            return Refusal(code="capability-off", reason=message("ptc.guard.off-by-parent", MODEL_LANG, tool=spec.name))
        skill = membership.skills.refuses(
            call, self._services.skills(call.caller) if call.tool in membership.skills.arguments else ()
        )
        if skill is not None:
            return Refusal(code="capability-off", reason=message("ptc.guard.off", MODEL_LANG, tool=skill))
        source = membership.resources.refuses(call)
        if source is not None:
            return Refusal(code="capability-off", reason=message("ptc.guard.off", MODEL_LANG, tool=source))
        return None
