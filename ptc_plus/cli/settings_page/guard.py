"""The page's one gate: its token, its own ``Host`` and its own ``Origin`` (ADR 0126).

A local server is reachable from every web page the user's browser opens: a hostile page can post a
form to ``http://127.0.0.1:PORT`` (cross-site), or point a name it controls at 127.0.0.1 and read the
answers as same-origin (DNS rebinding). The token in the URL defeats the first (the other page does not
know it); checking ``Host`` defeats the second (the rebound request names the attacker's host);
checking ``Origin`` refuses any script or form from elsewhere even if the token leaked.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qs

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

TOKEN_PARAMETER = "token"
"""The query parameter carrying the page's token."""
LOCAL_NAMES = ("127.0.0.1", "localhost")
"""The host names the page answers to (with its port)."""


class RequestGuard:
    """ASGI middleware: HTTP requests reach ``app`` only with the right token, ``Host`` and ``Origin``.

    Anything else gets ``403`` with a one-line plain-text reason and nothing of the page; other ASGI
    scopes (``lifespan``) pass through.
    """

    def __init__(self, app: App, *, token: str, port: int) -> None:
        self._app = app
        self._token = token.encode()
        self._hosts = frozenset(f"{name}:{port}" for name in LOCAL_NAMES)
        self._origins = frozenset(f"http://{host}" for host in self._hosts)

    def refusal(self, method: str, headers: MutableMapping[str, str], query: bytes) -> str | None:
        """Why a request with these (lower-cased) ``headers`` and raw ``query`` is refused; ``None``: it is not.

        A write (any method but GET and HEAD) must name its origin: browsers send ``Origin`` with every
        form post, so one without it did not come from the page.
        """
        if headers.get("host") not in self._hosts:
            return "host"
        origin = headers.get("origin")
        if origin is not None and origin not in self._origins:
            return "origin"
        if origin is None and method not in ("GET", "HEAD"):
            return "origin"
        given = parse_qs(query.decode("latin-1")).get(TOKEN_PARAMETER, [""])
        if len(given) != 1 or not hmac.compare_digest(given[0].encode(), self._token):
            return "token"
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}
        why = self.refusal(scope["method"], headers, scope.get("query_string", b""))
        if why is None:
            await self._app(scope, receive, send)
            return
        body = f"refused: {why}\n".encode()
        await send(
            {
                "type": "http.response.start",
                "status": 403,
                "headers": [
                    (b"content-type", b"text/plain; charset=utf-8"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
