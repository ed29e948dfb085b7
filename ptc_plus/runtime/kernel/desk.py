"""The REPL's state operations as a cell sees them: ``repl.save/restore/list/delete``.

Answered by the host while the cell runs; nothing here names a journal node to the
program. ``save`` names the state the current cell ends in, so it is kept only if the
cell settles durable (a save whose cell degrades is dropped, ADR 0081); on a volatile
kernel it is refused with the recorded reason and the live state is kept. ``restore``
takes effect when the cell ends: the next cell starts from the saved (or, without a name,
the last durable) state before this cell; no external effect is undone. ``delete`` is
journalled at once.
"""

from __future__ import annotations

from collections.abc import Callable

from hookspecs import JSONObject, JSONValue
from ptc_plus.i18n import message
from ptc_plus.runtime.kernel.journal import Journal

MAX_NAME = 200

Reason = tuple[str, str]


def reason_text(reason: Reason) -> str:
    """A volatile reason as the model and the person read it: ``kind: detail`` in the current locale."""
    kind, detail = reason
    text = message(f"runtime.repl.volatile.{kind}") if kind in _KINDS else kind
    return f"{text}: {detail}" if detail else text


_KINDS = frozenset(
    {
        "file-write",
        "subprocess",
        "socket",
        "ctypes",
        "unconfirmed",
        "discarded",
        "replay-off",
        "diverged",
        "corrupt",
        "threads",
        "too-large",
        "deadline",
    }
)


class StateDesk:
    """Answers one cell's state operations; read :attr:`saves` and :attr:`restore` when it settled."""

    def __init__(
        self,
        journal: Journal,
        parent: int,
        append_deleted: Callable[[str], None],
        *,
        replaying: bool = False,
        durable: bool = True,
    ) -> None:
        """``durable=False``: ``[runtime] durable_replay = false``, every cell is volatile from the first on."""
        self._journal = journal
        self._off: Reason | None = None if durable else ("replay-off", "")
        self._parent = parent
        self._append_deleted = append_deleted
        self._replaying = replaying
        self._names = dict(journal.saves)
        self.saves: list[str] = []
        self.restore: int | None = None

    def answer(self, op: str, name: str | None, volatile: Reason | None) -> tuple[bool, JSONValue]:
        """``(True, value)`` or ``(False, {"code", "message"})``; ``volatile``: the cell's own first reason."""
        if self._replaying:
            # A replayed cell's operations were journalled when it first ran; replaying them again
            # would save, restore or delete a second time.
            return True, self._list(volatile) if op == "list" else None
        if op == "list":
            return True, self._list(volatile)
        named = op != "restore" or name is not None
        if named and (not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME):
            return _refused("PTC-R006", limit=MAX_NAME)
        if op == "save":
            reason = self._journal.first_volatile(self._parent) if self._parent else None
            reason = self._off or reason or volatile
            if reason is not None:
                return _refused("PTC-R004", reason=reason_text(reason))
            assert name is not None
            self.saves.append(name)
            return True, None
        if op == "delete":
            assert name is not None
            if name in self.saves:
                self.saves.remove(name)
                return True, None
            if name not in self._names:
                return _refused("PTC-R005", name=name, names=", ".join(sorted(self._names)) or "-")
            del self._names[name]
            self._append_deleted(name)
            return True, None
        # restore
        if name is None:
            self.restore = self._journal.frontier(self._parent) if self._parent else 0
            return True, None
        if name not in self._names:
            return _refused("PTC-R005", name=name, names=", ".join(sorted(self._names)) or "-")
        self.restore = self._names[name]
        return True, None

    def _list(self, volatile: Reason | None) -> JSONObject:
        reason = self._off or (self._journal.first_volatile(self._parent) if self._parent else None) or volatile
        return {
            "names": sorted({*self._names, *self.saves}),
            "mode": "volatile" if reason is not None else "durable",
            "volatile_reason": reason_text(reason) if reason is not None else None,
        }


def _refused(code: str, **params: object) -> tuple[bool, JSONValue]:
    return False, {"code": code, "message": message(f"error.{code}", None, **params)}
