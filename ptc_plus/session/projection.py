"""Projections of one frozen environment: the bootstrap prompt section, the catalog message, model tools.

The bootstrap is fixed language (stable prefix: it never mentions the plan).
The catalog message carries complete contracts of ``full`` capabilities and a
bounded navigation of ``on-demand`` ones; explicit choices and navigation come
before anything that varies with statistics (SPEC §4 "Where the plan goes").
"""

from __future__ import annotations

from collections.abc import Sequence

from hookspecs import ContextMessage, PromptSection, ToolSpec
from hookspecs.i18n import message
from ptc_plus.capabilities.catalog import Catalog
from ptc_plus.capabilities.contract import delivery_text
from ptc_plus.config import Disclosure
from ptc_plus.plan import PlanEntry, Reason
from ptc_plus.runtime.tool import TOOL_NAME
from ptc_plus.sdk.literals import one_line
from ptc_plus.session.environment import Environment

CATALOG_PROVENANCE = "ptc-plus:catalog"
NAVIGATION_LIMIT = 40
"""On-demand members listed by name in the catalog message; the long tail stays searchable."""
_STABLE_REASONS = (Reason.EXPLICIT, Reason.MANAGEMENT_OFF)
MODEL_LANG = "en"
"""Model-facing text is English whatever the user's locale, so the prompt prefix does not vary by user."""


def bootstrap_section() -> PromptSection:
    return PromptSection(name="ptc-plus", order=200, text=message("ptc.bootstrap", MODEL_LANG, tool=TOOL_NAME))


def catalog_message(environment: Environment, catalog: Catalog) -> ContextMessage:
    """The plan's catalog: stable full contracts, bounded on-demand navigation, then full contracts that vary.

    "Stable" means decided by the config alone (explicit choice, management
    off); baseline and statistics members come last because statistics can
    change them between sessions. Members the host no longer offers are skipped.
    """
    full = environment.with_disclosure(Disclosure.FULL)
    stable = [e for e in full if e.reason in _STABLE_REASONS]
    varying = [e for e in full if e.reason not in _STABLE_REASONS]
    parts = [message("ptc.catalog.header", MODEL_LANG)]
    if text := _delivery(stable, catalog):
        parts.append(text)
    on_demand = sorted(
        environment.with_disclosure(Disclosure.ON_DEMAND), key=lambda e: (e.reason != Reason.EXPLICIT, e.identity)
    )
    if on_demand:
        lines = [message("ptc.catalog.on-demand", MODEL_LANG)]
        for entry in on_demand[:NAVIGATION_LIMIT]:
            cap = catalog.get(entry.identity)
            lines.append(f"# - {entry.name}: {one_line(cap.description) if cap else ''}".rstrip())
        if len(on_demand) > NAVIGATION_LIMIT:
            lines.append(message("ptc.catalog.more", MODEL_LANG, count=len(on_demand) - NAVIGATION_LIMIT))
        parts.append("\n".join(lines))
    if text := _delivery(varying, catalog):
        parts.append(text)
    return ContextMessage(provenance=CATALOG_PROVENANCE, text="\n\n".join(parts) + "\n")


def _delivery(entries: Sequence[PlanEntry], catalog: Catalog) -> str:
    capabilities = [cap for e in entries if (cap := catalog.get(e.identity)) is not None]
    return delivery_text(capabilities).rstrip() if capabilities else ""


def native_tools(view: Sequence[ToolSpec], managed: frozenset[str]) -> list[str]:
    """Tools offered to the model as function tools under the ``ptc`` presentation.

    ``run_code`` and every unmanaged tool of the view (for example the host's
    skill loader); managed tools are reached through programs.
    """
    return [s.name for s in view if s.name == TOOL_NAME or s.name not in managed]
