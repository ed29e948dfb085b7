"""A real settings-page server on 127.0.0.1 in a thread, for the page's HTTP and browser tests."""

from __future__ import annotations

import http.client
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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
