"""The child's output ledger: ``print``, ``sys.stdout/stderr.write`` and ``logging`` in order.

Writes are kept as ``[stream, text]`` entries in arrival order (consecutive
writes to one stream merge) and shipped to the host as ``log`` frames before
every tool call, at the end, and whenever enough text is waiting. The host
does the byte accounting; the child only keeps memory bounded by flushing.
Streams are ``stdout``, ``stderr`` and ``log`` (the ``logging`` module).
"""

from __future__ import annotations

import io
import logging
import threading
from collections.abc import Callable
from typing import Any

from . import foreign

FLUSH_CHARS = 1 << 16
FLUSH_INTERVAL_S = 0.02
"""Waiting text is shipped at least this often, so a program killed mid-loop still shows its output."""


def _clean(text: str) -> str:
    # Lone surrogates cannot be encoded as UTF-8 JSON; logs are diagnostics, so replace them.
    if text.isascii():
        return text
    return text.encode("utf-8", "replace").decode("utf-8")


class OutputLedger:
    """Ordered log entries waiting to be shipped through ``send``."""

    def __init__(self, send: Callable[[dict[str, Any]], None]) -> None:
        self._send = send
        self._entries: list[list[str]] = []
        self._waiting = 0
        # Program threads may print too; entries and flushes must not interleave.
        self._lock = threading.RLock()

    def write(self, stream: str, text: str) -> None:
        # A str subclass could answer += or isascii() with anything: keep only its characters.
        plain = foreign.plain(text)
        if not plain:
            return
        text = _clean(plain)
        with self._lock:
            self._append(stream, text)

    def _append(self, stream: str, text: str) -> None:
        if self._entries and self._entries[-1][0] == stream:
            self._entries[-1][1] += text
        else:
            self._entries.append([stream, text])
        self._waiting += len(text)
        if self._waiting >= FLUSH_CHARS:
            self.flush()

    def start_flusher(self) -> None:
        """Ship waiting text every :data:`FLUSH_INTERVAL_S` from a daemon thread (CPU-bound programs
        still yield the GIL to it at the interpreter's switch interval)."""
        threading.Thread(target=self._flush_periodically, name="ptc-ledger", daemon=True).start()

    def _flush_periodically(self) -> None:
        stop = threading.Event()
        while not stop.wait(FLUSH_INTERVAL_S):
            if self._entries:
                self.flush()

    def flush(self) -> None:
        if not self._entries:
            return  # before every tool call, usually with nothing to ship: skip the lock
        with self._lock:
            if self._entries:
                entries, self._entries, self._waiting = self._entries, [], 0
                self._send({"type": "log", "entries": entries})


class CaptureText(io.TextIOBase):
    """A text stream writing into the ledger; ``fileno()`` is the real descriptor."""

    def __init__(self, ledger: OutputLedger, stream: str, fd: int) -> None:
        super().__init__()
        self._ledger = ledger
        self._stream = stream
        self._fd = fd
        self.buffer = _CaptureBytes(self)

    encoding = "utf-8"
    errors = "strict"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self._fd

    def write(self, text: str) -> int:
        plain = foreign.plain(text)
        if plain is None:
            raise TypeError(f"write() argument must be str, not {foreign.type_name(type(text))}")
        self._ledger.write(self._stream, plain)
        return len(plain)


class _CaptureBytes(io.RawIOBase):
    """``sys.stdout.buffer``: bytes are decoded as UTF-8 (invalid bytes replaced)."""

    def __init__(self, text: CaptureText) -> None:
        super().__init__()
        self._text = text

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        # The methods of bytes itself: a subclass's decode() or __len__ could return anything.
        self._text.write(bytes.decode(chunk, "utf-8", "replace"))
        return bytes.__len__(chunk)


class LedgerHandler(logging.Handler):
    """Sends ``logging`` records to the ``log`` stream, one line each."""

    def __init__(self, ledger: OutputLedger) -> None:
        super().__init__(logging.NOTSET)
        self._ledger = ledger
        self.setFormatter(logging.Formatter("%(levelname)s:%(name)s:%(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._ledger.write("log", self.format(record) + "\n")
        except Exception:
            self.handleError(record)
