"""What the plugin holds for one session: :class:`SessionState`, a frozen value replaced on every change."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import attrs

from hookspecs import SessionInfo
from ptc_plus.capabilities import Catalog
from ptc_plus.config import ContextSection, Presentation, UserBindings
from ptc_plus.runtime import RunLimits
from ptc_plus.session.delivery import Delivery
from ptc_plus.session.environment import Environment
from ptc_plus.session.membership import Membership
from ptc_plus.session.presentation import InForce

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
    membership: Membership | None = None
    """Who belongs under code mode, frozen with the environment (``None``: no environment)."""
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

    @property
    def ptc(self) -> bool:
        """Code mode is in force (presentation ``ptc`` or ``both``)."""
        return self.environment is not None and self.presented.code_mode

    @property
    def presentation(self) -> Presentation:
        return self.presented.presentation if self.environment is not None else Presentation.NATIVE
