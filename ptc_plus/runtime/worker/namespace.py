"""The program's ``tools`` namespace and :class:`ToolCallError`.

``tools.<name>(**kwargs)`` and ``tools["name"](**kwargs)`` reach exactly the
tools the host put in ``boot``; nothing else. Unknown names raise
``AttributeError``/``KeyError`` naming close matches. Tool names never become
attributes of the object, so a tool called ``__class__`` or ``class`` cannot
shadow anything: it is reachable only by subscript.
"""

from __future__ import annotations

import difflib
import keyword
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from . import foreign, messages

Invoke = Callable[[str, dict[str, Any]], Awaitable[Any]]


class ToolCallError(Exception):
    """A nested tool call failed; catch it to handle one tool's failure.

    :ivar tool_name: the tool that failed.
    :ivar code: the host's error code (for example ``tool-exception``, ``abandoned``).
    :ivar call_id: the nested call id ``<outer>:ptc:<n>``.
    :ivar data: the error's extra data (JSON).
    """

    def __init__(self, tool_name: str, code: str, message: str, call_id: str = "", data: Any = None) -> None:
        super().__init__(messages.text("runtime.worker.tool_failed", name=tool_name, code=code, message=message))
        self.tool_name = tool_name
        self.code = code
        self.message = message
        self.call_id = call_id
        self.data = data if data is not None else {}


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _attribute_name(name: str) -> bool:
    """Whether ``tools.<name>`` can be written (otherwise only ``tools["name"]``)."""
    return name.isidentifier() and not keyword.iskeyword(name) and not _is_dunder(name)


def build_tools(names: list[str], invoke: Invoke, off: list[str] | None = None) -> Any:
    """A fresh namespace object over ``names`` whose calls go through ``invoke``; a name of ``off`` (tools
    the session's capability plan keeps from programs) is refused saying so, not as unknown."""
    known = frozenset(names)
    planned_out = frozenset(off or ()) - known
    ordered = sorted(known)
    bound: dict[str, Callable[..., Awaitable[Any]]] = {}

    def bind(name: str) -> Callable[..., Awaitable[Any]]:
        async def call(*args: Any, **kwargs: Any) -> Any:
            if args:
                raise TypeError(messages.text("runtime.worker.positional", name=name))
            return await invoke(name, kwargs)

        call.__name__ = name if name.isidentifier() else "tool"
        call.__qualname__ = f"tools.{name}"
        bound[name] = call
        return call

    def missing(name: str) -> str:
        if name in planned_out:
            return messages.text("runtime.worker.tool_off", name=name)
        name = foreign.clip(name)  # the message repeats the name: a huge one would make it huge
        matches = difflib.get_close_matches(name, ordered, n=5, cutoff=0.5)
        clause = messages.text("runtime.worker.close_matches", matches=", ".join(matches)) if matches else ""
        return messages.text("runtime.worker.unknown_tool", name=name, matches=clause)

    class Tools:
        __slots__ = ()

        # Names are looked up as exact str copies: a str subclass's __hash__/__eq__ never runs here.

        def __getattr__(self, name: str) -> Any:
            plain = foreign.plain(name) or ""
            if plain in known and not _is_dunder(plain):
                return bound.get(plain) or bind(plain)
            raise AttributeError(missing(plain))

        def __getitem__(self, name: object) -> Any:
            plain = foreign.plain(name)
            if plain is not None and plain in known:
                return bound.get(plain) or bind(plain)
            raise KeyError(missing(plain if plain is not None else f"<{foreign.type_name(type(name))} object>"))

        def __setattr__(self, name: str, value: object) -> None:
            raise AttributeError(messages.text("runtime.worker.read_only"))

        def __delattr__(self, name: str) -> None:
            raise AttributeError(messages.text("runtime.worker.read_only"))

        def __contains__(self, name: object) -> bool:
            plain = foreign.plain(name)
            return plain is not None and plain in known

        def __iter__(self) -> Iterator[str]:
            return iter(ordered)

        def __len__(self) -> int:
            return len(ordered)

        def __dir__(self) -> list[str]:
            return [name for name in ordered if _attribute_name(name)]

        def __repr__(self) -> str:
            return f"<tools: {', '.join(ordered)}>"

    Tools.__name__ = Tools.__qualname__ = "tools"
    return Tools()
