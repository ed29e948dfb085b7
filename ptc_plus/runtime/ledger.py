"""The host's output ledger: every byte of a run's output, counted on its serialized form.

Entries arrive from ``log`` frames (``stdout``/``stderr``/``log``) and from the
child's raw descriptors (``fd1``/``fd2``). Consecutive text of one stream is
merged (its chunks are kept in a list and joined once, when the outcome is
built: appending to a string would copy it on every chunk). The cost of the ledger is the length of the JSON array of
``{"stream": ..., "text": ...}`` objects the caller will receive, escaping
included; the program's value is charged on top. Going over the budget
raises :class:`OutputBudgetExceeded` and the text is not kept.
"""

from __future__ import annotations

import codecs

import orjson

from ptc_plus.runtime.outcome import LogEntry

_ENTRY_OVERHEAD = len(b'{"stream":"","text":""},')


class OutputBudgetExceeded(Exception):
    pass


class HostLedger:
    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.used = 2  # the enclosing brackets
        self._entries: list[tuple[str, list[str]]] = []
        self._decoders = {
            "fd1": codecs.getincrementaldecoder("utf-8")("replace"),
            "fd2": codecs.getincrementaldecoder("utf-8")("replace"),
        }

    def add(self, stream: str, text: str) -> None:
        if not text:
            return
        cost = len(orjson.dumps(text)) - 2
        merge = bool(self._entries) and self._entries[-1][0] == stream
        if not merge:
            cost += _ENTRY_OVERHEAD + len(stream) - (0 if self._entries else 1)  # no comma before the first
        self.charge(cost)
        if merge:
            self._entries[-1][1].append(text)
        else:
            self._entries.append((stream, [text]))

    def add_raw(self, stream: str, data: bytes, final: bool = False) -> None:
        """Raw descriptor output; UTF-8 decoded incrementally (invalid bytes replaced)."""
        self.add(stream, self._decoders[stream].decode(data, final))

    def charge(self, cost: int) -> None:
        if self.used + cost > self.max_bytes:
            self.used = self.max_bytes + 1
            raise OutputBudgetExceeded
        self.used += cost

    @property
    def over(self) -> bool:
        return self.used > self.max_bytes

    def entries(self) -> tuple[LogEntry, ...]:
        return tuple(LogEntry(stream=stream, text="".join(chunks)) for stream, chunks in self._entries)
