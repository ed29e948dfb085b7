"""What a refresh would change: the difference between two plans of one session, member by member.

A member is *added* when the new plan makes it callable (``full`` or
``on-demand``) and the old one did not (``off``, or not in the plan);
*removed* in the opposite case; *changed* when it is callable in both with
another disclosure; *revised* when it keeps its disclosure, ``full`` or
``on-demand``, but its contract revision moved (ADR 0090): a tool's schema,
a skill's catalog line, a resource source's listing. Any copy of the old
contract the model or a program holds is stale then, whether the catalog
carried it or discovery delivered it. Reasons, statistics and token counts
are not differences: they change nothing the model or a program can see.
"""

from __future__ import annotations

import attrs

from ptc_plus.config import Disclosure
from ptc_plus.plan.model import CapabilityPlan, PlanEntry

_CALLABLE = (Disclosure.FULL, Disclosure.ON_DEMAND)


@attrs.frozen(kw_only=True)
class MemberChange:
    """One member's move: its disclosure before and after (``None``: not in that plan)."""

    identity: str
    name: str
    before: Disclosure | None
    after: Disclosure | None


@attrs.frozen(kw_only=True)
class PlanDiff:
    """Members added, removed, changed in disclosure, and revised, each sorted by identity."""

    added: tuple[MemberChange, ...] = ()
    removed: tuple[MemberChange, ...] = ()
    changed: tuple[MemberChange, ...] = ()
    revised: tuple[MemberChange, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed or self.revised)

    def removed_names(self) -> frozenset[str]:
        return frozenset(c.name for c in self.removed if c.name)


def plan_diff(old: CapabilityPlan, new: CapabilityPlan) -> PlanDiff:
    """How ``new`` differs from ``old`` for the model and for programs."""
    before = {e.identity: e for e in old.entries}
    after = {e.identity: e for e in new.entries}
    added: list[MemberChange] = []
    removed: list[MemberChange] = []
    changed: list[MemberChange] = []
    revised: list[MemberChange] = []
    for identity in sorted(before.keys() | after.keys()):
        was, now = before.get(identity), after.get(identity)
        change = MemberChange(
            identity=identity,
            name=_name(now) or _name(was),
            before=was.disclosure if was else None,
            after=now.disclosure if now else None,
        )
        if change.before not in _CALLABLE and change.after in _CALLABLE:
            added.append(change)
        elif change.before in _CALLABLE and change.after not in _CALLABLE:
            removed.append(change)
        elif change.before in _CALLABLE and change.before is not change.after:
            changed.append(change)
        elif change.after in _CALLABLE and was and now and was.revision != now.revision:
            revised.append(change)
    return PlanDiff(added=tuple(added), removed=tuple(removed), changed=tuple(changed), revised=tuple(revised))


def _name(entry: PlanEntry | None) -> str:
    return entry.name if entry is not None else ""
