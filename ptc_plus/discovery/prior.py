"""The workspace's usage as a prior between near ties (ADR 0111).

A ranking orders by score; two matches whose scores differ by a hair are told apart by noise (a word's
weight in a sentence embedding, a description one word longer). Between such *near ties* the capability the
workspace's sessions used in more families is the better guess. :func:`prefer_used` moves a match above
the ones right before it only while it is a near tie of each (:func:`near_tie`) and was used by strictly
more families; it never passes a match whose fused or lexical score is clearly better, so the prior can
reorder only what the ranker itself could not tell apart, and without usage nothing moves.

The counts are the plan's (``PlanEntry.coverage`` × ``samples``: identities and counts only, frozen with
the plan), so one plan gives one ranking.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from ptc_plus.discovery.rules import Match, Ranking

NEAR_TIE = 0.005
"""Two scores are a near tie when the lower is within this share of the higher (both the fused score and
the lexical score must be). Chosen a priori, never tuned: below every gap the ranker's own rules open. The
smallest fused one is the operation bonus between a same-family sibling and one the verb has no opinion on
(0.025, ADR 0099), and a fused score stays under 4 (1 + 1 + the gloss's 0.2 + 1.5, plus 0.075), so a
near tie spans at most 0.02; lexical action factors differ by at least 10 %. The prior never undoes a rule."""


def near_tie(above: Match, below: Match) -> bool:
    """Whether ``below`` is within :data:`NEAR_TIE` of ``above`` in both its fused and its lexical score."""
    return _within(above.score, below.score) and _within(above.lexical, below.lexical)


def _within(higher: float, lower: float) -> bool:
    return higher - lower <= NEAR_TIE * abs(higher)


def prefer_used(ranking: Ranking, usage: Mapping[str, int]) -> Ranking:
    """``ranking`` with each match moved above the matches it is a near tie of and that were used by fewer
    families (``usage``: identity → families that used it; absent means 0). Stable: equal use keeps the
    ranker's order. ``confident``, ``total`` and the gloss are the ranking's own."""
    if not usage:
        return ranking
    ordered: list[Match] = []
    for match in ranking.matches:
        uses = usage.get(match.identity, 0)
        at = len(ordered)
        while at > 0 and uses > usage.get(ordered[at - 1].identity, 0) and near_tie(ordered[at - 1], match):
            at -= 1
        ordered.insert(at, match)
    return attrs.evolve(ranking, matches=tuple(ordered))
