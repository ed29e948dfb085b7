"""The catalog message's text, composed in one place: what the model receives, and what the plan's budget counts.

The plan's ``full`` members are delivered in two blocks: those decided by the
config and the catalog alone (*stable*) first, then those that vary with
statistics, with the on-demand navigation between them, so the bytes that
statistics move come last (ADR 0054). Each block is one
:func:`~ptc_plus.capabilities.delivery_text`: a type shared within a block is
declared once, a type shared by the two blocks is declared in each (and so is a
source's header line). :func:`compose` is that composition; the catalog message
and the plan's delivery cost (:func:`~.provision.delivery_cost`) both call it,
so the budget counts the text the model receives (ADR 0112).
"""

from __future__ import annotations

from collections.abc import Sequence

from ptc_plus.capabilities import Catalog, delivery_text
from ptc_plus.plan import Reason

STABLE_REASONS = (Reason.EXPLICIT, Reason.SERVER_UNIT, Reason.MANAGEMENT_OFF, Reason.FITS_BUDGET)
"""Reasons decided by the config and the catalog alone, never by statistics (an MCP server's own choice is one,
ADR 0071; a catalog that fits the budget whole is shown as management-off would show it, ADR 0080)."""
_PARTS = "\n\n"


def compose(
    catalog: Catalog, stable: Sequence[str], varying: Sequence[str], *, header: str = "", navigation: str = ""
) -> str:
    """The header, the stable ``full`` contracts, the navigation, then the varying ones; ``""`` when all are empty.

    Identities the catalog no longer holds are skipped. Without ``header`` and
    ``navigation`` this is the contracts' part of the message, the text the plan's budget counts.
    """
    parts = [header] if header else []
    if text := _block(catalog, stable):
        parts.append(text)
    if navigation:
        parts.append(navigation)
    if text := _block(catalog, varying):
        parts.append(text)
    return _PARTS.join(parts) + "\n" if parts else ""


def _block(catalog: Catalog, identities: Sequence[str]) -> str:
    capabilities = [cap for identity in identities if (cap := catalog.get(identity)) is not None]
    return delivery_text(capabilities).rstrip() if capabilities else ""
