"""The program's ``repl`` object (kernel mode only) and :class:`ReplError`.

``await repl.save(name)``, ``await repl.restore(name=None)``, ``await
repl.list()`` and ``await repl.delete(name)`` send a ``repl`` frame that the
host answers from the session's journal. Each request carries the
first OS-touching event of the cell so far, so the host can refuse to save a
state that replay could not rebuild. The object holds nothing but these four
methods and cannot be changed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from . import foreign, messages

Send = Callable[[str, "str | None"], Awaitable[Any]]

MAX_NAME = 200
"""The longest state name (the host refuses longer ones as a protocol violation)."""
BAD_NAME = "invalid-name"


class ReplError(Exception):
    """A state operation was refused (for example saving a volatile state, or an unknown name).

    :ivar code: the host's stable error code.
    :ivar message: the host's message.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def build_repl(send: Send) -> Any:
    """A fresh ``repl`` object whose requests go through ``send(op, name)``."""

    def checked(name: object, required: bool) -> str | None:
        if name is None and not required:
            return None
        plain = foreign.plain(name)
        if plain is None or not plain or len(plain) > MAX_NAME:
            raise ReplError(BAD_NAME, messages.text("runtime.worker.repl_bad_name", limit=MAX_NAME))
        return plain

    async def save(name: Any) -> Any:
        return await send("save", checked(name, True))

    async def restore(name: Any = None) -> Any:
        return await send("restore", checked(name, False))

    async def list_() -> Any:
        return await send("list", None)

    async def delete(name: Any) -> Any:
        return await send("delete", checked(name, True))

    list_.__name__ = "list"
    methods = {"save": save, "restore": restore, "list": list_, "delete": delete}
    for method, function in methods.items():
        function.__qualname__ = f"repl.{method}"

    class Repl:
        __slots__ = ()

        def __getattr__(self, name: str) -> Any:
            function = methods.get(name)
            if function is None:
                raise AttributeError(
                    messages.text("runtime.worker.repl_no_attribute", name=foreign.clip(foreign.plain(name) or "?"))
                )
            return function

        def __setattr__(self, name: str, value: object) -> None:
            raise AttributeError(messages.text("runtime.worker.repl_read_only"))

        def __delattr__(self, name: str) -> None:
            raise AttributeError(messages.text("runtime.worker.repl_read_only"))

        def __dir__(self) -> list[str]:
            return sorted(methods)

        def __repr__(self) -> str:
            return "<repl: delete, list, restore, save>"

    Repl.__name__ = Repl.__qualname__ = "repl"
    return Repl()
