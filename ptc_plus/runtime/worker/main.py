"""The child's entry point: ``ready`` → wait for ``boot`` → run the program → ``done`` → wait for the host.

A ``boot`` frame carrying ``kernel`` starts kernel mode instead (:mod:`.kernel`):
the process keeps one namespace and runs a cell for every further ``boot``.

Started as ``python -I -S -X utf8 -c <starter> <runtime-dir> <control-in-fd> <control-out-fd>``.
A warm spare sits in :func:`main` after ``ready`` until a run boots it; when
the host closes the channel instead, the child exits quietly. After ``done``
the child stays (a subreaper holding the program's orphaned descendants)
until the host, having killed those, closes the channel or kills it.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import inspect
import json
import logging
import os
import sys
from collections.abc import Callable
from types import CodeType
from typing import Any

from . import foreign, frames, kernel, lossless, messages, outcomes, program, reaper, rlimits
from .capabilities import DiscoveryError, build_capabilities
from .channel import ChildChannel, ToolArgumentError
from .ledger import CaptureText, LedgerHandler, OutputLedger
from .namespace import ToolCallError, build_tools
from .resources import build_resources
from .spill import READ_TOOL, build_spill

PROTOCOL_VERSION = 1


CONFINE_FLAG = "--confine="  # carries the confinement steps the host chose (``sandbox.confine``, ADR 0049)
CHANNEL_PREFIX = "unix:"  # a control channel named by a socket path (``socket_channel.CHANNEL_PREFIX``)
CONFINEMENT_FAILED_EXIT = 71  # EX_OSERR: the host reads an exit before ``ready`` as "sandbox unavailable"


def main(argv: list[str]) -> None:
    fd_in, fd_out = _channel(argv[0], argv[1])
    # Before ``ready``: a warm spare pays for it while idle, and no program code has run yet.
    for arg in argv[2:]:
        if arg.startswith(CONFINE_FLAG):
            _confine(arg[len(CONFINE_FLAG) :])
    reaper.become_subreaper()
    frames.write_all(fd_out, frames.encode({"type": "ready", "version": PROTOCOL_VERSION, "pid": os.getpid()}))
    boot = frames.read_frame(fd_in)
    if boot is None or boot.get("type") != "boot":
        os._exit(0)
    rlimits.apply(boot.get("limits", {}))
    messages.install(boot.get("messages", {}))
    _serve(boot, fd_in, fd_out)
    os._exit(0)


def _channel(first: str, second: str) -> tuple[int, int]:
    """The control channel's ends: two inherited descriptors, or ``unix:<path>``: two connections to that socket,
    the host's frames on the first, the child's on the second (an executor that cannot pass descriptors, ADR 0127).
    Two, not one: the reading end is made non-blocking, which a duplicate of one socket would share.
    Connected before confinement, like inherited pipes."""
    if not first.startswith(CHANNEL_PREFIX):
        return int(first), int(second)
    import socket

    ends = []
    for _ in range(2):
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.connect(first[len(CHANNEL_PREFIX) :])
        ends.append(connection.detach())
    return ends[0], ends[1]


def _confine(settings: str) -> None:
    from . import confine  # only confined children pay for ctypes

    try:
        confine.apply(json.loads(settings))
    except Exception as error:
        os.write(2, f"ptc-plus: confinement failed: {error}\n".encode())
        os._exit(CONFINEMENT_FAILED_EXIT)


def _serve(boot: dict[str, Any], fd_in: int, fd_out: int) -> None:
    """Run :func:`_run` on a fresh event loop until it ends the process.

    A program task or callback that raises ``SystemExit`` or ``KeyboardInterrupt``
    makes asyncio re-raise it out of the loop (``asyncio.run`` would end the
    worker, and the run would be misreported as ``worker-exit``). Here it is
    handed to :func:`_execute` as the program's failure and the loop goes on.
    """
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    escapes = kernel.Escapes(loop)
    task = loop.create_task(_run(boot, fd_in, fd_out, escapes))
    while not task.done():
        try:
            loop.run_until_complete(task)
        except BaseException as error:  # let out of the loop by program code; see the docstring
            if task.done():
                raise  # the worker's own failure: the host reports the exit
            escapes.escaped(error)


async def _run(boot: dict[str, Any], fd_in: int, fd_out: int, escapes: kernel.Escapes) -> None:
    ledger_holder: list[OutputLedger] = []
    channel = ChildChannel(fd_in, fd_out, int(boot["limits"]["max_pending_calls"]), lambda: ledger_holder[0].flush())
    ledger = OutputLedger(channel.send)
    ledger_holder.append(ledger)
    ledger.start_flusher()
    own_threads = reaper.threads()
    sys.stdout = CaptureText(ledger, "stdout", 1)
    sys.stderr = CaptureText(ledger, "stderr", 2)
    logging.basicConfig(level=logging.INFO, handlers=[LedgerHandler(ledger)], force=True)
    if boot.get("kernel") is not None:
        await kernel.serve(boot, channel, ledger, escapes, execute)  # ends the process
    frame = await _execute(boot, channel, escapes.current)
    ledger.flush()
    channel.send_bytes(frame)
    if not reaper.children() and reaper.threads() <= own_threads:
        # Nothing of the program is left that could still start a process: end now.
        os._exit(0)
    # Stay alive until the host closes the channel: orphaned descendants of the program are
    # re-parented to this process (a subreaper) only while it lives, so the host can find them.
    os.set_blocking(fd_in, True)
    with contextlib.suppress(OSError):
        while os.read(fd_in, 1 << 16):
            pass
    # The host has swept our descendants; catch any a program thread started since.
    reaper.kill_children()
    # Skip interpreter teardown: leftover program threads or tasks must not delay the end.
    os._exit(0)


async def _execute(boot: dict[str, Any], channel: ChildChannel, escaped: asyncio.Future[BaseException]) -> bytes:
    """The program's ``done`` frame."""
    names = [str(name) for name in boot["tools"]]
    namespace: dict[str, Any] = {
        "__name__": "__ptc__",
        "__builtins__": builtins,
        "tools": build_tools(names, channel.invoke, [str(name) for name in boot.get("off") or ()]),
        "capabilities": build_capabilities(channel.discover),
        "spill": build_spill(channel.invoke, READ_TOOL in names),
        "resources": build_resources(channel.invoke, frozenset(names)),
        "ToolCallError": ToolCallError,
        "ToolArgumentError": ToolArgumentError,
        "DiscoveryError": DiscoveryError,
    }
    return await execute(lambda: program.compile_program(str(boot["code"])), namespace, boot, escaped)


async def execute(
    prepare: Callable[[], CodeType],
    namespace: dict[str, Any],
    boot: dict[str, Any],
    escaped: asyncio.Future[BaseException],
    extra: Callable[[], dict[str, Any]] = dict,
) -> bytes:
    """Run the code ``prepare()`` compiles in ``namespace`` under the bounds of ``boot``: its ``done``
    frame, with the fields ``extra()`` gives once the program has ended. Nothing the program made is
    trusted here: its value is checked without running its code and its exception is read through
    :mod:`.foreign` (ADR 0052). ``prepare`` runs inside the program's failure handling: what it
    raises is the program's outcome."""
    max_output = int(boot["limits"]["max_output_bytes"])
    max_message = int(boot["limits"]["max_message_bytes"])
    try:
        exec(prepare(), namespace)
        coroutine = namespace[program.ENTRY]()
        if not inspect.iscoroutine(coroutine):
            raise SyntaxError(messages.text("runtime.worker.yield"))
        task = asyncio.get_running_loop().create_task(coroutine, name="program")
        await asyncio.wait((task, escaped), return_when=asyncio.FIRST_COMPLETED)
        if not task.done():
            raise escaped.result()  # SystemExit/KeyboardInterrupt from another task of the program
        value = task.result()
    except BaseException as error:  # the program's failure, whatever it is, is its outcome
        # Each text is bounded so the frame stays far below max_message_bytes even at 6 bytes a
        # character; the host fits it to what is left of the output budget (ADR 0052).
        return _exception_frame(error, max(0, min(max_output, max_message // 16)), extra())
    fields = extra()
    budget = min(max_output, max_message)
    # The key that sets the budget: the person who raises it must know which one to raise.
    key = "max_message_bytes" if max_message <= max_output else "max_output_bytes"
    floor = 0
    try:
        lossless.check(value)
        floor = lossless.size_floor(value, budget)
        if floor > budget:  # cannot fit: do not try an encoding that may not even fit in memory
            return _too_large(budget, floor, key, fields)
        frame = frames.encode({"type": "done", "ok": True, "value": value, **fields})
    except lossless.NotLossless as error:
        return _error_frame(outcomes.INVALID_OUTPUT, f"{error.path}: {error.reason}", fields)
    except MemoryError:  # the value fits the budget but its encoding does not fit the run's memory
        return _too_large(budget, floor, "memory_bytes", fields)
    except BaseException:  # a program thread changed the value between the check and the encoding
        return _error_frame(outcomes.INVALID_OUTPUT, messages.text("runtime.worker.value_changed"), fields)
    if len(frame) > budget:
        return _too_large(budget, len(frame), key, fields)
    return frame


def _too_large(budget: int, size: int, key: str, fields: dict[str, Any]) -> bytes:
    """``output-limit`` naming the size (at least) and the ``[runtime]`` key that stopped the value."""
    error = {"kind": outcomes.OUTPUT_LIMIT, "message": str(budget), "size": size, "key": key}
    return frames.encode({"type": "done", "ok": False, "error": error, **fields})


def _error_frame(kind: str, message: str, fields: dict[str, Any]) -> bytes:
    return frames.encode({"type": "done", "ok": False, "error": {"kind": kind, "message": message}, **fields})


def _exception_frame(error: BaseException, limit: int, fields: dict[str, Any]) -> bytes:
    summary: dict[str, Any] = {"kind": outcomes.EXCEPTION, **program.error_summary(error, limit)}
    if type(error) is ToolCallError:  # exactly ours: a subclass could compute tool_name
        try:
            tool_name = foreign.plain(error.tool_name)
        except BaseException:  # the program replaced the attribute with something hostile
            tool_name = None
        if tool_name is not None:
            summary["tool_name"] = foreign.clip(tool_name)
    return frames.encode({"type": "done", "ok": False, "error": summary, **fields})


if __name__ == "__main__":  # pragma: no cover - the host uses the starter in process.py
    main(sys.argv[1:])
