"""A real settings-page server on 127.0.0.1 in a thread, for the page's HTTP and browser tests."""

from __future__ import annotations

import html
import http.client
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

from ptc_plus.cli.settings_page import SettingsServer, bind_local

START_TIMEOUT_S = 120.0
"""Generous: a loaded machine may take long to start uvicorn; a verdict never depends on it."""


@contextmanager
def running_server(workspace: Path) -> Iterator[SettingsServer]:
    """A server for ``workspace``; its socket listens before this yields, so requests queue until it serves."""
    sock = bind_local()
    server = SettingsServer(workspace=workspace, sock=sock)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.stop()
        thread.join(START_TIMEOUT_S)
        sock.close()
        assert not thread.is_alive(), "the settings server did not stop"


def get(server: SettingsServer, target: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    """``GET target`` with ``Host: 127.0.0.1:PORT`` unless ``headers`` says otherwise; status and body."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=START_TIMEOUT_S)
    try:
        connection.putrequest("GET", target, skip_host=True)
        sent = {"Host": f"127.0.0.1:{server.port}", **(headers or {})}
        for name, value in sent.items():
            connection.putheader(name, value)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


def post(
    server: SettingsServer, target: str, form: dict[str, str], headers: dict[str, str] | None = None
) -> tuple[int, str]:
    """``POST target`` with ``form`` url-encoded, from the page's own origin unless ``headers`` says otherwise."""
    body = urlencode(form).encode()
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=START_TIMEOUT_S)
    try:
        connection.putrequest("POST", target, skip_host=True)
        sent = {
            "Host": f"127.0.0.1:{server.port}",
            "Origin": f"http://127.0.0.1:{server.port}",
            "Content-Type": "application/x-www-form-urlencoded",
            "Content-Length": str(len(body)),
            **(headers or {}),
        }
        for name, value in sent.items():
            if value:
                connection.putheader(name, value)
        connection.endheaders(body)
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


def form_of(page: str, form_id: str = "switch") -> dict[str, str]:
    """The hidden fields of the page's form ``form_id`` (its form token, the value it saw, its language)."""
    found = re.search(rf'<form [^>]*id="{form_id}"[^>]*>(.*?)</form>', page, re.S)
    assert found is not None, f"no form {form_id!r} on the page"
    return _hidden(found.group(1))


@dataclass(frozen=True)
class PageForm:
    """One ``method="post"`` form of the page: where it posts and its hidden fields."""

    action: str
    fields: dict[str, str]


def post_forms(page: str) -> list[PageForm]:
    """Every post form of the page, in page order."""
    return [
        PageForm(action=html.unescape(action), fields=_hidden(body))
        for action, body in re.findall(r'<form method="post" action="([^"]*)"[^>]*>(.*?)</form>', page, re.S)
    ]


def post_form(page: str, route: str, **fields: str) -> PageForm:
    """The one post form of ``page`` to ``/route`` whose hidden fields include ``fields``."""
    found = [
        form
        for form in post_forms(page)
        if form.action.startswith(f"/{route}?") and all(form.fields.get(k) == v for k, v in fields.items())
    ]
    assert len(found) == 1, (route, fields, len(found))
    return found[0]


def _hidden(body: str) -> dict[str, str]:
    found = dict(re.findall(r'<input type="hidden" name="([a-z_]+)" value="([^"]*)">', body))
    return {name: html.unescape(value) for name, value in found.items()}


def cli_child(*args: str) -> subprocess.CompletedProcess[str]:
    """``ptc-plus ARGS`` in a child process with this environment (a concurrent edit from the command line)."""
    return subprocess.run(
        [sys.executable, "-c", "import sys; from ptc_plus.cli import main; sys.exit(main())", *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=START_TIMEOUT_S,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])},
    )
