"""Per-page form tokens: each rendering of the page gets its own, and a save spends it (ADR 0126).

The URL token proves a request comes from someone who was given the address; a form token proves a save
comes from a page this server rendered, once: a replayed or forged post fails even with the URL token.
"""

from __future__ import annotations

import hmac
import secrets
import threading
from collections import OrderedDict

KEPT = 64
"""How many unspent tokens are remembered; the oldest go first (a tab left open that long reloads)."""


class FormTokens:
    """Issue and spend form tokens; safe to use from uvicorn's loop and Starlette's worker threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._unspent: OrderedDict[str, None] = OrderedDict()

    def issue(self) -> str:
        token = secrets.token_urlsafe(24)
        with self._lock:
            self._unspent[token] = None
            while len(self._unspent) > KEPT:
                self._unspent.popitem(last=False)
        return token

    def spend(self, token: str) -> bool:
        """True once for a token :meth:`issue` gave and not yet spent; false for anything else."""
        with self._lock:
            for known in self._unspent:
                if hmac.compare_digest(known.encode(), token.encode()):
                    del self._unspent[known]
                    return True
        return False
