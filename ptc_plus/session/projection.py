"""Projections of one frozen environment: the bootstrap prompt section, the catalog message, model tools.

The bootstrap is fixed language (stable prefix: it never mentions the plan).
The catalog message carries complete contracts of ``full`` capabilities and a
bounded navigation of ``on-demand`` ones; explicit choices and navigation come
before anything that varies with statistics.
The navigation is bounded in count *and* in measured tokens (ADR 0054).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from hookspecs import ContextMessage, PromptSection, TokenCounter
from ptc_plus.capabilities import Catalog
from ptc_plus.config import Disclosure, Presentation
from ptc_plus.i18n import message
from ptc_plus.runtime import TOOL_NAME
from ptc_plus.sdk import one_line
from ptc_plus.session.catalog_text import STABLE_REASONS, compose
from ptc_plus.session.environment import Environment

CATALOG_PROVENANCE = "ptc-plus:catalog"
NAVIGATION_LIMIT = 20
"""On-demand members listed by name in the catalog message; the long tail stays searchable. Every request
carries the list, and beyond explicit choices it is in identity order, not by relevance: a sample of what is
there, not a way to the tool a task needs (ADR 0107 halved it from 40)."""
NAVIGATION_TOKENS = 400
"""The most the on-demand navigation (its header, the listed lines and the "… more" line) may cost (ADR 0054;
1,000 before ADR 0107 measured it as 56 % of code mode's fixed part at 200 tools)."""
SUMMARY_CHARS = 120
"""A listed member's description is its first sentence, cut to this many characters (ADR 0054)."""
MODEL_LANG = "en"
"""Model-facing text is English whatever the user's locale, so the prompt prefix does not vary by user."""


def bootstrap_section() -> PromptSection:
    return PromptSection(name="ptc-plus", order=200, text=message("ptc.bootstrap", MODEL_LANG, tool=TOOL_NAME))


@attrs.frozen(kw_only=True)
class Navigation:
    """The on-demand navigation of a catalog message and what it costs.

    :ivar text: the navigation block (``""`` when nothing is on demand).
    :ivar listed: members named in it; the other ``total - listed`` are only counted.
    :ivar tokens: measured tokens of ``text`` (in the counter's unit), never above ``bound``.
    """

    text: str = ""
    listed: int = 0
    total: int = 0
    tokens: int = 0
    bound: int = NAVIGATION_TOKENS


def navigation(environment: Environment, catalog: Catalog, counter: TokenCounter) -> Navigation:
    """Name on-demand members (explicit choices first, then by identity) while the block fits.

    A member is listed only if the block with its line — and with the "… and
    N more" line the rest then needs — still costs at most
    :data:`NAVIGATION_TOKENS`, and never more than :data:`NAVIGATION_LIMIT`
    members; each line carries a short summary, never a whole description. Consecutive members whose
    summaries are the same text share one line (``# - cat, cd, cp: This tool belongs to …``): repeating a
    service's boilerplate per name cost a BFCL request 20 copies of it (ADR 0120).
    """
    on_demand = sorted(
        environment.with_disclosure(Disclosure.ON_DEMAND), key=lambda e: (e.reason not in STABLE_REASONS, e.identity)
    )
    if not on_demand:
        return Navigation(bound=NAVIGATION_TOKENS)
    total = len(on_demand)
    lines = [message("ptc.catalog.on-demand", MODEL_LANG)]

    def block(listed: Sequence[str], names: int) -> str:
        rest = total - names
        more = [message("ptc.catalog.more", MODEL_LANG, count=rest)] if rest else []
        return "\n".join([*lines, *listed, *more])

    groups: list[tuple[tuple[str, ...], str]] = []
    text = block([], 0)
    tokens = counter.count(text)
    for entry in on_demand[:NAVIGATION_LIMIT]:
        cap = catalog.get(entry.identity)
        said = summary(cap.description) if cap else ""
        if groups and said and groups[-1][1] == said:
            # Members whose summaries are the same text (one service's boilerplate) share one line (ADR 0120).
            trial = [*groups[:-1], ((*groups[-1][0], entry.name), said)]
        else:
            trial = [*groups, ((entry.name,), said)]
        candidate = block([_line(names, shared) for names, shared in trial], sum(len(names) for names, _ in trial))
        cost = counter.count(candidate)
        if cost > NAVIGATION_TOKENS:
            break
        groups = trial
        text, tokens = candidate, cost
    listed = sum(len(names) for names, _ in groups)
    return Navigation(text=text, listed=listed, total=total, tokens=tokens, bound=NAVIGATION_TOKENS)


def _line(names: Sequence[str], said: str) -> str:
    """One navigation line: the members' names and the summary they share."""
    return f"# - {', '.join(names)}: {said}".rstrip()


def summary(description: str, limit: int = SUMMARY_CHARS) -> str:
    """The first sentence of ``description`` on one line, cut at a word to ``limit`` characters (``…`` marks a cut)."""
    flat = " ".join(one_line(description).split())
    end = flat.find(". ")
    if 0 <= end < limit:
        return flat[: end + 1]
    if len(flat) <= limit:
        return flat
    cut = flat[:limit]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.") + "…"


def catalog_message(
    environment: Environment,
    catalog: Catalog,
    counter: TokenCounter,
    presentation: Presentation = Presentation.PTC,
    found: Navigation | None = None,
) -> ContextMessage:
    """The plan's catalog: stable full contracts, bounded on-demand navigation, then full contracts that vary.

    "Stable" means decided by the config alone (explicit choice, management
    off); baseline and statistics members come last because statistics can
    change them between sessions. Members the host no longer offers are skipped.
    Under ``both`` the header also says the ``full`` tools are direct function tools.
    The text is :func:`~.catalog_text.compose`'s, as the plan's budget counts it;
    ``found`` is the environment's navigation when the caller already has it.
    """
    full = environment.with_disclosure(Disclosure.FULL)
    stable = [e.identity for e in full if e.reason in STABLE_REASONS]
    varying = [e.identity for e in full if e.reason not in STABLE_REASONS]
    header = message("ptc.catalog.header", MODEL_LANG)
    if presentation is Presentation.BOTH:
        header += "\n" + message("ptc.catalog.both", MODEL_LANG)
    shown = found if found is not None else navigation(environment, catalog, counter)
    text = compose(catalog, stable, varying, header=header, navigation=shown.text)
    return ContextMessage(provenance=CATALOG_PROVENANCE, text=text)


def withdrawn_message() -> ContextMessage:
    """The notice superseding a code-mode catalog once the session is presented natively."""
    return ContextMessage(provenance=CATALOG_PROVENANCE, text=message("ptc.catalog.withdrawn", MODEL_LANG) + "\n")
