"""Kernel mode: one process, one namespace, one cell per ``boot`` frame.

The first ``boot`` carrying ``"kernel": {"first_id", "drop", "bindings", "turned_off"}``
starts it (limits and messages are applied once, by :mod:`.main`). For each
cell: the names in ``drop`` are deleted, each binding ``[name, source]`` (when
``bindings`` is not null) is executed as module source in the namespace, in
order, then the cell runs (:mod:`.cell`). ``tools``, ``capabilities``,
``spill``, ``resources`` and ``repl`` are bound anew from the cell's tool list;
a proxy held from an earlier cell reaches only tools this cell has. The
``done`` frame carries ``"volatile"``: the first OS-touching event since the
previous ``done`` (:mod:`.audit`). Then the process waits for the next
``boot``; the host closing the channel ends it quietly.
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import Awaitable, Callable
from types import CodeType
from typing import Any

from . import audit, cell, foreign, messages, reaper
from .capabilities import DiscoveryError, build_capabilities
from .channel import ChildChannel, ToolArgumentError
from .ledger import OutputLedger
from .namespace import ToolCallError, build_tools
from .repl import ReplError, build_repl
from .resources import build_resources
from .spill import READ_TOOL, build_spill

Execute = Callable[
    [
        Callable[[], CodeType],
        dict[str, Any],
        dict[str, Any],
        asyncio.Future[BaseException],
        Callable[[], dict[str, Any]],
    ],
    Awaitable[bytes],
]


DETAIL_CHARS = 500
"""How much of a failing binding's own message the cell's error repeats."""


class Escapes:
    """Where a ``SystemExit``/``KeyboardInterrupt`` let out of the event loop by program code goes:
    the running cell's future (each cell gets a fresh one, so one escaping between cells is dropped)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.current: asyncio.Future[BaseException] = loop.create_future()

    def renew(self) -> asyncio.Future[BaseException]:
        self.current = self._loop.create_future()
        return self.current

    def escaped(self, error: BaseException) -> None:
        if not self.current.done():
            self.current.set_result(error)


class BindingError(Exception):
    """A user binding (a module the config loads into every cell) raised while it was executed."""


_BASE: dict[str, Any] = {
    "__name__": "__ptc__",
    "__builtins__": builtins,
    "ToolCallError": ToolCallError,
    "ToolArgumentError": ToolArgumentError,
    "DiscoveryError": DiscoveryError,
    "ReplError": ReplError,
    "BindingError": BindingError,
}
"""What every cell's namespace starts with; a name dropped or deleted comes back, one the program
rebound stays as it made it."""


async def serve(
    boot: dict[str, Any], channel: ChildChannel, ledger: OutputLedger, escapes: Escapes, execute: Execute
) -> None:
    """Run cells until the host closes the channel (which ends the process in the channel)."""
    audit.install()
    namespace: dict[str, Any] = {}
    while True:
        frame = await _cell(boot, namespace, channel, escapes, execute)
        # The cell's processes do not outlive it (the host sweeps too); reaped here, so none is left
        # a zombie of this long-lived process.
        reaper.kill_children()
        ledger.flush()
        channel.close_cell()
        channel.send_bytes(frame)
        boot = await channel.next_boot()


async def _cell(
    boot: dict[str, Any],
    namespace: dict[str, Any],
    channel: ChildChannel,
    escapes: Escapes,
    execute: Execute,
) -> bytes:
    settings = boot["kernel"]
    names = [str(name) for name in boot["tools"]]
    turned_off = {str(name): int(sequence) for name, sequence in settings.get("turned_off") or ()}
    channel.open_cell(int(settings["first_id"]), frozenset(names), turned_off)
    # Dropped first: a dropped name may be one of those set below (``tools`` is referenced by most cells).
    for name in settings.get("drop") or ():
        namespace.pop(str(name), None)
    for name, value in _BASE.items():
        namespace.setdefault(name, value)

    async def repl_request(op: str, name: str | None) -> Any:
        return await channel.repl(op, name, audit.peek())

    namespace.update(
        tools=build_tools(names, channel.invoke, [str(name) for name in boot.get("off") or ()]),
        capabilities=build_capabilities(channel.discover),
        spill=build_spill(channel.invoke, READ_TOOL in names),
        resources=build_resources(channel.invoke, frozenset(names)),
        repl=build_repl(repl_request),
    )
    code = str(boot["code"])
    bindings = settings.get("bindings")

    def prepare() -> CodeType:
        for name, source in bindings or ():
            _bind(str(name), str(source), namespace)
        return cell.compile_cell(code)

    # The output bounds are each cell's own (``max_output_bytes`` is per cell); the process's limits
    # were applied from the first boot.
    return await execute(prepare, namespace, boot, escapes.renew(), lambda: {"volatile": audit.take()})


def _bind(name: str, source: str, namespace: dict[str, Any]) -> None:
    try:
        exec(compile(source, f"<binding {name}>", "exec", dont_inherit=True), namespace)
    except BaseException as error:  # whatever the module raised fails the cell, naming the module
        cause = f"{foreign.type_name(type(error))}: {foreign.clip(foreign.text_of(error, '?'), DETAIL_CHARS)}"
        raise BindingError(messages.text("runtime.worker.binding_failed", name=name, error=cause)) from error
