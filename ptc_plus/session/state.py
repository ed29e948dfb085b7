"""What the plugin holds for one session: :class:`SessionState`, a frozen value replaced on every change.

:meth:`SessionState.opened` is the one place a state is built from the facts of now
(start and resume alike); :meth:`SessionState.refreshed` applies a refresh's facts to it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from hookspecs import SessionInfo
from ptc_plus.capabilities import Catalog
from ptc_plus.config import ContextSection, Presentation, UserBindings
from ptc_plus.runtime import RunLimits
from ptc_plus.session.delivery import Delivery
from ptc_plus.session.environment import Environment
from ptc_plus.session.membership import Membership
from ptc_plus.session.opening import Today
from ptc_plus.session.presentation import InForce
from ptc_plus.session.view import FrozenView

if TYPE_CHECKING:
    from ptc_plus.session.refresh import Candidate

__all__ = ["SessionState"]


@attrs.frozen(kw_only=True)
class SessionState:
    """What the plugin holds for one session; replaced (never mutated) on change."""

    info: SessionInfo
    environment: Environment | None
    """``None``: the session keeps the host's own provision (no record, or an unproven one)."""
    limits: RunLimits
    catalog: Catalog
    presented: InForce
    """The presentation in force now and why (checked at start, and again at resume)."""
    view: FrozenView | None = None
    """The environment's membership and catalog message, built once when it is held (``None``: no environment)."""
    delivery: Delivery = attrs.field(factory=Delivery)
    gate_warnings: tuple[str, ...] = ()
    diagnostics: tuple[str, ...] = ()
    context: ContextSection = attrs.field(factory=ContextSection)
    """The context budgets read with the config when the session opened (or last refreshed)."""
    bindings: UserBindings = attrs.field(factory=UserBindings)
    """The REPL's user bindings read with the config when the session opened or resumed."""
    pending: Candidate | None = None
    """A validated refresh waiting for the session's running programs to end."""
    turned_off: Mapping[str, int] = attrs.field(factory=dict)
    """Tool name -> the refresh that turned it off (and no later one turned back on)."""
    refresh_failure: str = ""
    """Why the latest pending refresh failed when it was applied (``""``: it did not)."""

    @classmethod
    def opened(
        cls,
        info: SessionInfo,
        today: Today,
        environment: Environment | None,
        presented: InForce,
        *,
        diagnostics: Sequence[str] | None = None,
        gate_warnings: tuple[str, ...] | None = None,
        delivery: Delivery | None = None,
        turned_off: Mapping[str, int] | None = None,
    ) -> SessionState:
        """The state of ``info``'s session opened (started or resumed) with ``today``: what it reads from
        the facts of now, unless given (a resume adds the restore's diagnostics and its records' delivery)."""
        return cls(
            info=info,
            environment=environment,
            presented=presented,
            delivery=delivery if delivery is not None else Delivery(),
            bindings=today.bindings,
            turned_off=turned_off if turned_off is not None else {},
            **_facts(today, diagnostics, gate_warnings),
        )

    def refreshed(
        self, today: Today, environment: Environment, presented: InForce, turned_off: Mapping[str, int]
    ) -> SessionState:
        """This state with a refresh applied: its environment and the facts it read (the REPL's user bindings
        stay those read when the session opened); no view yet, no pending refresh, no failure."""
        return attrs.evolve(
            self,
            environment=environment,
            presented=presented,
            view=None,
            pending=None,
            turned_off=turned_off,
            refresh_failure="",
            **_facts(today, None, None),
        )

    @property
    def membership(self) -> Membership | None:
        """Who belongs under code mode, frozen with the environment (``None``: no environment)."""
        return self.view.membership if self.view is not None else None

    @property
    def ptc(self) -> bool:
        """Code mode is in force (presentation ``ptc`` or ``both``)."""
        return self.environment is not None and self.presented.code_mode

    @property
    def presentation(self) -> Presentation:
        return self.presented.presentation if self.environment is not None else Presentation.NATIVE


def _facts(today: Today, diagnostics: Sequence[str] | None, gate_warnings: tuple[str, ...] | None) -> dict[str, Any]:
    """The fields a state reads from the facts of now."""
    return {
        "limits": today.configured.limits,
        "catalog": today.catalog,
        "gate_warnings": today.gate.warnings if gate_warnings is None else gate_warnings,
        "diagnostics": tuple(today.diagnostics() if diagnostics is None else diagnostics),
        "context": today.loaded.config.context,
    }
