"""Whether the runtime can actually run programs for a session here.

SDK text is injected only when the gate passed *and* the sandbox policy is
satisfiable on this machine; otherwise the session is presented natively and
the reason is kept for ``/capabilities``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures

import attrs

from ptc_plus.runtime import RunLimits, probe_sandbox


@attrs.frozen(kw_only=True)
class Readiness:
    usable: bool
    reason: str = ""
    """Stable token when not usable: ``sandbox-unavailable`` (the gate is decided elsewhere)."""
    detail: str = ""


def sandbox_readiness(limits: RunLimits) -> Readiness:
    """Probe confinement once per bwrap path (cached by the runtime); unconfined policies are always ready.

    Hooks are synchronous and may run inside the host's event loop, so the
    asynchronous probe runs to completion on a helper thread.
    """
    if not limits.policy.confined:
        return Readiness(usable=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        availability = pool.submit(asyncio.run, probe_sandbox(limits.bwrap_path, limits.python)).result()
    if availability.available:
        return Readiness(usable=True)
    return Readiness(usable=False, reason="sandbox-unavailable", detail=availability.detail)
