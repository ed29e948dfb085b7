"""The page's server: Starlette behind :class:`.RequestGuard`, run by uvicorn on a socket bound to 127.0.0.1."""

from __future__ import annotations

import secrets
import socket
import threading
from pathlib import Path
from urllib.parse import parse_qs, urlencode

import attrs
import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from hookspecs.i18n import LOCALES, current_locale
from ptc_plus.cli.settings_page.field_errors import FieldNote
from ptc_plus.cli.settings_page.form_tokens import FormTokens
from ptc_plus.cli.settings_page.guard import TOKEN_PARAMETER, RequestGuard
from ptc_plus.cli.settings_page.page import render
from ptc_plus.cli.settings_page.refresh import refresh_route
from ptc_plus.cli.settings_page.saves import save_routes
from ptc_plus.cli.settings_page.session_section import Shown
from ptc_plus.cli.settings_page.view import gather
from ptc_plus.config import ConfigEditConflict, set_management_enabled

HOST = "127.0.0.1"
"""The only address the page listens on: never another machine's reach."""


def bind_local(port: int = 0) -> socket.socket:
    """A listening socket on 127.0.0.1 (``port`` 0: one the system picks). Connections made from now on
    wait in its backlog until the server accepts them, so a caller may connect as soon as this returns."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, port))
        sock.listen(64)
    except OSError:
        sock.close()
        raise
    return sock


@attrs.define
class SettingsServer:
    """One page server for ``workspace`` on ``sock``; :meth:`run` serves until :meth:`stop` or Ctrl-C."""

    workspace: Path
    sock: socket.socket
    token: str = attrs.field(factory=lambda: secrets.token_urlsafe(24))
    forms: FormTokens = attrs.field(factory=FormTokens)
    refreshing: threading.Lock = attrs.field(factory=threading.Lock)
    """One refresh from this page at a time: a second tab's waits, then finds the plan refreshed (ADR 0130)."""
    _server: uvicorn.Server = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        config = uvicorn.Config(self.app(), log_level="warning", access_log=False, lifespan="off")
        self._server = uvicorn.Server(config)

    @property
    def port(self) -> int:
        port: int = self.sock.getsockname()[1]
        return port

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/?{TOKEN_PARAMETER}={self.token}"

    def app(self) -> RequestGuard:
        def page(request: Request) -> HTMLResponse:  # sync: Starlette runs it in a worker thread
            return self._page(_lang(request.query_params.get("lang")), query=request.query_params.get("q", ""))

        async def switch(request: Request) -> Response:
            form = {key: values[-1] for key, values in parse_qs((await request.body()).decode()).items()}
            if not self.forms.spend(form.get("form_token", "")):
                return PlainTextResponse("refused: form token\n", status_code=403)
            expected, enabled = form.get("expected", ""), form.get("enabled")
            if expected not in ("", "true", "false") or enabled not in ("true", "false"):
                return PlainTextResponse("refused: value\n", status_code=400)
            lang = _lang(form.get("lang"))
            try:
                await run_in_threadpool(
                    set_management_enabled,
                    self.workspace,
                    enabled == "true",
                    expected=None if expected == "" else expected == "true",
                )
            except ConfigEditConflict as conflict:  # another edit came first: show it, never overwrite it
                return await run_in_threadpool(self._page, lang, str(conflict.params["theirs"]), 409)
            return RedirectResponse("/?" + urlencode({TOKEN_PARAMETER: self.token, "lang": lang}), status_code=303)

        async def refresh(request: Request) -> Response:
            form = {key: values[-1] for key, values in parse_qs((await request.body()).decode()).items()}
            if not self.forms.spend(form.get("form_token", "")):
                return PlainTextResponse("refused: form token\n", status_code=403)
            lang = _lang(form.get("lang"))
            shown, status = await run_in_threadpool(
                refresh_route, self.workspace, form.get("session", ""), lang, self.refreshing
            )
            return await run_in_threadpool(self._page, lang, None, status, shown=shown)

        routes = [
            Route("/", page),
            Route("/switch", switch, methods=["POST"]),
            Route("/refresh", refresh, methods=["POST"]),
        ]
        routes += save_routes(self.workspace, self.forms, self.token, self._page)
        return RequestGuard(Starlette(routes=routes), token=self.token, port=self.port)

    def _page(
        self,
        lang: str,
        conflict: str | None = None,
        status: int = 200,
        *,
        query: str = "",
        note: FieldNote | None = None,
        shown: Shown | None = None,
    ) -> HTMLResponse:
        view = gather(self.workspace, lang)
        return HTMLResponse(
            render(
                view,
                lang,
                self.token,
                form_token=self.forms.issue(),
                conflict=conflict,
                query=query,
                note=note,
                shown=shown,
            ),
            status_code=status,
            headers={"cache-control": "no-store", "referrer-policy": "same-origin", "x-frame-options": "DENY"},
        )

    def run(self) -> None:
        """Serve until stopped; in the main thread, uvicorn turns Ctrl-C into a clean shutdown."""
        self._server.run(sockets=[self.sock])

    def stop(self) -> None:
        """Ask a running :meth:`run` to finish its requests and return."""
        self._server.should_exit = True


def _lang(asked: str | None) -> str:
    return asked if asked in LOCALES else current_locale()
