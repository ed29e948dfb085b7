"""The host's output ledger: every byte of a run's output, counted on its serialized form.

Entries arrive from ``log`` frames (``stdout``/``stderr``/``log``) and from the
child's raw descriptors (``fd1``/``fd2``). Consecutive text of one stream is
merged (its chunks are kept in a list and joined once, when the outcome is
built: appending to a string would copy it on every chunk). The cost of the ledger is the length of the JSON array of
``{"stream": ..., "text": ...}`` objects the caller will receive, escaping
included; the program's value is charged on top. Going over the budget
raises :class:`OutputBudgetExceeded` and the text is not kept.

Diagnostics share the budget (ADR 0052): :meth:`HostLedger.fit_failure`
charges a failure's program-made text — exception type and message, tool
name, traceback, the detail of ``invalid-output`` and ``protocol`` — after the
logs, and cuts what does not fit instead of refusing it: a message keeps its
start, a traceback its start and end, and a marker says how many characters
were cut. The child cuts too (so its ``done`` frame stays small), but it is
not trusted to: the host cuts whatever it receives.

An :data:`OutputObserver` sees each piece of text as the ledger keeps it
(ADR 0064): exactly what the result will carry, in order, as it arrives, and
nothing over the budget. It only watches: the result is the same with or
without one.
"""

from __future__ import annotations

import codecs
import functools
import logging
import re
from collections.abc import Callable

import attrs
import orjson

from ptc_plus.i18n import message
from ptc_plus.runtime.outcome import LogEntry, RunFailure
from ptc_plus.runtime.worker.foreign import NAME_CHARS

_ENTRY_OVERHEAD = len(b'{"stream":"","text":""},')

_log = logging.getLogger(__name__)

OutputObserver = Callable[[str, str], None]
"""Called with ``(stream, text)`` for each piece of output the ledger keeps, on the event loop, as it
arrives. It should return quickly; if it raises, the error is logged and the observer is dropped."""


class OutputBudgetExceeded(Exception):
    pass


class HostLedger:
    def __init__(self, max_bytes: int, observer: OutputObserver | None = None) -> None:
        self.max_bytes = max_bytes
        self._observer = observer
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
        if self._observer is not None:
            self._notify(self._observer, stream, text)

    def _notify(self, observer: OutputObserver, stream: str, text: str) -> None:
        try:
            observer(stream, text)
        except Exception as error:
            # Whoever watches (a terminal that went away) must not change the run or its result.
            _log.warning("output observer failed (%s: %s); it sees no more of this run", type(error).__name__, error)
            self._observer = None

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

    # -- diagnostics ------------------------------------------------------------------

    def fit_failure(self, failure: RunFailure) -> RunFailure:
        """``failure`` with its program-made text charged to what is left of the budget, cut where needed.

        Names (exception type, tool name) are cut to :data:`NAME_CHARS` characters and served
        first; the long texts (message or detail, traceback) then share the rest evenly, a short
        one leaving its unused share to the others. Cut markers and the kind's own text are
        framing: they are not charged.
        """
        params = dict(failure.params)
        pieces: list[_Piece] = []
        for key in failure.kind.row.program_names:
            if type(params.get(key)) is str:
                pieces.append(_Piece(params[key], _keep_head, NAME_CHARS, functools.partial(params.__setitem__, key)))
        result = {"traceback": failure.traceback, "tool_name": failure.tool_name}
        if failure.tool_name is not None:
            pieces.append(
                _Piece(failure.tool_name, _keep_head, NAME_CHARS, functools.partial(result.__setitem__, "tool_name"))
            )
        for key in failure.kind.row.program_texts:
            if type(params.get(key)) is str:
                pieces.append(_Piece(params[key], _keep_head, None, functools.partial(params.__setitem__, key)))
        if failure.traceback is not None:
            pieces.append(
                _Piece(failure.traceback, _keep_ends, None, functools.partial(result.__setitem__, "traceback"))
            )
        if not pieces:
            return failure
        names = [piece for piece in pieces if piece.cap is not None]
        texts = [piece for piece in pieces if piece.cap is None]
        for group in (names, texts):
            shares = _shares([piece.cost for piece in group], max(0, self.max_bytes - self.used))
            for piece, share in zip(group, shares, strict=True):
                kept, cost = piece.fit(share)
                self.used += cost
                piece.store(kept)
        return attrs.evolve(failure, params=params, traceback=result["traceback"], tool_name=result["tool_name"])


def _cost(text: str) -> int:
    """Bytes ``text`` adds inside a JSON document (what logs are charged)."""
    return len(orjson.dumps(text)) - 2


def _shares(costs: list[int], budget: int) -> list[int]:
    """Split ``budget`` over ``costs``: equal shares, a piece needing less than its share leaving the rest."""
    shares = [0] * len(costs)
    left = budget
    order = sorted(range(len(costs)), key=costs.__getitem__)
    for position, index in enumerate(order):
        share = min(costs[index], left // (len(order) - position))
        shares[index] = share
        left -= share
    return shares


def _marker(count: int) -> str:
    return message("runtime.worker.omitted", count=count)


def _marker_pattern() -> re.Pattern[str]:
    """Markers in the current locale, with their count captured (the child uses the host's templates)."""
    before, _, after = message("runtime.worker.omitted", count="\x00").partition("\x00")
    return re.compile(re.escape(before) + r"(\d{1,15})" + re.escape(after))


def _head(text: str, budget: int) -> str:
    """The longest prefix of ``text`` that costs at most ``budget`` bytes (never half a character or escape)."""
    if budget <= 0:
        return ""
    prefix = text[:budget]  # a character costs at least one byte
    encoded = orjson.dumps(prefix)
    if len(encoded) - 2 <= budget:
        return prefix
    body = encoded[1 : 1 + budget]
    # Back off to the end of the last whole escape (at most 6 bytes) or UTF-8 sequence (at most 4).
    for back in range(8):
        try:
            kept: str = orjson.loads(b'"' + body[: len(body) - back] + b'"')
        except orjson.JSONDecodeError:
            continue
        return kept
    return ""


def _tail(text: str, budget: int) -> str:
    """The longest suffix of ``text`` that costs at most ``budget`` bytes."""
    return _head(text[::-1], budget)[::-1]


def _keep_head(text: str, budget: int) -> tuple[int, int]:
    """Characters kept from the start and from the end of ``text`` when cutting it to ``budget``."""
    return len(_head(text, budget)), 0


def _keep_ends(text: str, budget: int) -> tuple[int, int]:
    head = _head(text, budget // 2)
    return len(head), len(_tail(text[len(head) :], budget - _cost(head)))


@attrs.define
class _Piece:
    """One program-made text being fitted: how to cut it and where the result goes."""

    text: str
    cut: Callable[[str, int], tuple[int, int]]
    cap: int | None
    store: Callable[[str], object]
    cost: int = 0

    def __attrs_post_init__(self) -> None:
        # JSON cannot carry lone surrogates; the text came through JSON, but a host-made detail might not have.
        self.text = self.text.encode("utf-8", "replace").decode("utf-8")
        if self.cap is not None and len(self.text) > self.cap:
            self.cost = _cost(self.text[: self.cap])
        else:
            self.cost = _cost(self.text)

    def fit(self, budget: int) -> tuple[str, int]:
        """The text cut to ``budget`` bytes (and to its cap), marked with how much was cut, and its cost."""
        text = self.text
        if self.cap is None and _cost(text) <= budget:
            return text, _cost(text)
        head, tail = self.cut(text, budget)
        if self.cap is not None:
            head = min(head, self.cap)
        if head + tail >= len(text):
            return text, _cost(text)
        head, tail = _outside_markers(text, head, tail)
        removed = text[head : len(text) - tail]
        # The child may have cut already (its marker is in the removed part): one marker says it all.
        found = list(_marker_pattern().finditer(removed))
        count = len(removed) - sum(len(match[0]) for match in found) + sum(int(match[1]) for match in found)
        kept_head, kept_tail = text[:head], text[len(text) - tail :]
        return kept_head + _marker(count) + kept_tail, _cost(kept_head) + _cost(kept_tail)


def _outside_markers(text: str, head: int, tail: int) -> tuple[int, int]:
    """Move the cut points out of any marker they fall into, so no marker is kept in part."""
    end = len(text) - tail
    for match in _marker_pattern().finditer(text):
        if match.start() < head < match.end():
            head = match.start()
        if match.start() < end < match.end():
            end = match.end()
    return head, len(text) - max(end, head)
