"""The frozen view of one held environment: its membership and its catalog message, built once (ADR 0112).

A session's view is built when its state is held (start, resume, a refresh
applied) and read by every projection until the next: the guard, the program's
namespace and discovery read the membership, the context messages offer the
catalog message as built here (a refresh notice may open it), ``/capabilities``
shows the navigation it was built with.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from hookspecs import ContextMessage, SkillSpec, TokenCounter
from ptc_plus.capabilities import Catalog
from ptc_plus.config import ContextSection, Presentation
from ptc_plus.session.environment import Environment
from ptc_plus.session.membership import Membership, freeze_membership
from ptc_plus.session.projection import Navigation, catalog_message, navigation


@attrs.frozen(kw_only=True)
class FrozenView:
    """What one environment is read through under the presentation it is held with."""

    membership: Membership
    catalog: ContextMessage | None = None
    """The catalog message (without any refresh notice) under code mode; ``None`` natively."""
    navigation: Navigation | None = None
    """The on-demand navigation the catalog message carries (``None`` natively)."""


def freeze_view(
    environment: Environment,
    catalog: Catalog,
    skills: Sequence[SkillSpec],
    counter: TokenCounter,
    *,
    presentation: Presentation,
    code_mode: bool,
    context: ContextSection,
    membership: Membership | None = None,
) -> FrozenView:
    """The view of ``environment`` held with ``presentation`` (code mode in force or not) over ``catalog``;
    ``membership`` when a refresh already validated one."""
    if membership is None:
        membership = freeze_membership(
            environment,
            catalog,
            skills,
            counter,
            direct=presentation is Presentation.BOTH,
            code_mode=code_mode,
            discovery_budget=context.discovery_tokens,
        )
    if not code_mode:
        return FrozenView(membership=membership)
    found = navigation(environment, catalog, counter)
    message = catalog_message(environment, catalog, counter, presentation, found)
    return FrozenView(membership=membership, catalog=message, navigation=found)
