"""Whether the runtime can actually run programs for a session here.

SDK text is injected only when the gate passed *and* the sandbox policy is
satisfiable on this machine; otherwise the session is presented natively and
the reason is kept for ``/capabilities``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures

import attrs

from ptc_plus.runtime import RunLimits, executor_availability


@attrs.frozen(kw_only=True)
class Readiness:
    usable: bool
    reason: str = ""
    """Stable token when not usable: ``sandbox-unavailable`` (the gate is decided elsewhere)."""
    detail: str = ""


def sandbox_readiness(limits: RunLimits) -> Readiness:
    """Ask the runtime whether its configured executor confines programs here (probed once, cached by the
    runtime; ADR 0127); unconfined policies are always ready. Never another executor in its place.

    Hooks are synchronous and may run inside the host's event loop, so the
    asynchronous probe runs to completion on a helper thread.
    """
    if not limits.policy.confined:
        return Readiness(usable=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        availability = pool.submit(asyncio.run, executor_availability(limits)).result()
    if availability.available:
        return Readiness(usable=True)
    return Readiness(usable=False, reason="sandbox-unavailable", detail=availability.detail)
