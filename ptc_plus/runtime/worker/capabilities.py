"""The program's ``capabilities`` object (discovery) and :class:`DiscoveryError`.

``await capabilities.search(query, budget=None, limit=10)`` (``query`` a text
or a list of phrasings), ``find(query, limit=20)``, ``inspect(names,
budget=None)`` and ``tree(limit=50)`` — the
names and defaults of :mod:`ptc_plus.discovery.api` — send a
``discover`` frame and return the host's plain-JSON answer. Every argument is
sent explicitly (``None`` means the host's default), so the frame always
carries exactly the method's argument names. The object holds nothing but
these four methods: no other attribute reaches the host, and it cannot be
changed.
"""

from __future__ import annotations

import difflib
from collections.abc import Awaitable, Callable
from typing import Any

from . import messages

Discover = Callable[[str, dict[str, Any]], Awaitable[Any]]

METHODS = ("find", "inspect", "search", "tree")


class DiscoveryError(Exception):
    """A discovery request was refused: a bad argument, or discovery is unavailable in this session.

    :ivar method: ``search``, ``find``, ``inspect`` or ``tree``.
    :ivar code: the stable error code (for example ``PTC-3105`` for a bad argument).
    :ivar message: the host's message.
    """

    def __init__(self, method: str, code: str, message: str) -> None:
        super().__init__(messages.text("runtime.worker.discovery_failed", name=method, code=code, message=message))
        self.method = method
        self.code = code
        self.message = message


def build_capabilities(discover: Discover) -> Any:
    """A fresh ``capabilities`` object whose requests go through ``discover(method, args)``."""

    async def search(query: Any, *, budget: Any = None, limit: Any = 10) -> Any:
        return await discover("search", {"query": query, "budget": budget, "limit": limit})

    async def find(query: Any, *, limit: Any = 20) -> Any:
        return await discover("find", {"query": query, "limit": limit})

    async def inspect(names: Any, *, budget: Any = None) -> Any:
        return await discover("inspect", {"names": names, "budget": budget})

    async def tree(*, limit: Any = 50) -> Any:
        return await discover("tree", {"limit": limit})

    methods = {"search": search, "find": find, "inspect": inspect, "tree": tree}
    for name, function in methods.items():
        function.__qualname__ = f"capabilities.{name}"

    def missing(name: str) -> str:
        close = difflib.get_close_matches(name, METHODS, n=3, cutoff=0.5)
        return messages.text("runtime.worker.unknown_method", name=name, methods=", ".join(close or METHODS))

    class Capabilities:
        __slots__ = ()

        def __getattr__(self, name: str) -> Any:
            function = methods.get(name)
            if function is None:
                raise AttributeError(missing(name))
            return function

        def __setattr__(self, name: str, value: object) -> None:
            raise AttributeError(messages.text("runtime.worker.capabilities_read_only"))

        def __delattr__(self, name: str) -> None:
            raise AttributeError(messages.text("runtime.worker.capabilities_read_only"))

        def __dir__(self) -> list[str]:
            return list(METHODS)

        def __repr__(self) -> str:
            return "<capabilities: find, inspect, search, tree>"

    Capabilities.__name__ = Capabilities.__qualname__ = "capabilities"
    return Capabilities()
