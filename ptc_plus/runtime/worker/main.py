"""The child's entry point: ``ready`` → wait for ``boot`` → run the program → ``done`` → wait for the host.

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
from typing import Any

from . import limits, lossless, messages, program, reaper, wire
from .capabilities import DiscoveryError, build_capabilities
from .channel import ChildChannel, ToolArgumentError
from .ledger import CaptureText, LedgerHandler, OutputLedger
from .namespace import ToolCallError, build_tools

PROTOCOL_VERSION = 1


CONFINE_FLAG = "--confine="
CONFINEMENT_FAILED_EXIT = 71  # EX_OSERR: the host reads an exit before ``ready`` as "sandbox unavailable"


def main(argv: list[str]) -> None:
    fd_in, fd_out = int(argv[0]), int(argv[1])
    # Before ``ready``: a warm spare pays for it while idle, and no program code has run yet.
    for arg in argv[2:]:
        if arg.startswith(CONFINE_FLAG):
            _confine(arg[len(CONFINE_FLAG) :])
    reaper.become_subreaper()
    wire.write_all(fd_out, wire.encode({"type": "ready", "version": PROTOCOL_VERSION, "pid": os.getpid()}))
    boot = wire.read_frame(fd_in)
    if boot is None or boot.get("type") != "boot":
        os._exit(0)
    limits.apply(boot.get("limits", {}))
    messages.install(boot.get("messages", {}))
    asyncio.run(_run(boot, fd_in, fd_out))
    os._exit(0)


def _confine(settings: str) -> None:
    from . import confine  # only confined children pay for ctypes

    try:
        confine.apply(json.loads(settings))
    except Exception as error:
        os.write(2, f"ptc-plus: confinement failed: {error}\n".encode())
        os._exit(CONFINEMENT_FAILED_EXIT)


async def _run(boot: dict[str, Any], fd_in: int, fd_out: int) -> None:
    ledger_holder: list[OutputLedger] = []
    channel = ChildChannel(fd_in, fd_out, int(boot["limits"]["max_pending_calls"]), lambda: ledger_holder[0].flush())
    ledger = OutputLedger(channel.send)
    ledger_holder.append(ledger)
    ledger.start_flusher()
    own_threads = reaper.threads()
    sys.stdout = CaptureText(ledger, "stdout", 1)
    sys.stderr = CaptureText(ledger, "stderr", 2)
    logging.basicConfig(level=logging.INFO, handlers=[LedgerHandler(ledger)], force=True)
    frame = await _execute(boot, channel)
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


async def _execute(boot: dict[str, Any], channel: ChildChannel) -> bytes:
    names = [str(name) for name in boot["tools"]]
    namespace: dict[str, Any] = {
        "__name__": "__ptc__",
        "__builtins__": builtins,
        "tools": build_tools(names, channel.invoke),
        "capabilities": build_capabilities(channel.discover),
        "ToolCallError": ToolCallError,
        "ToolArgumentError": ToolArgumentError,
        "DiscoveryError": DiscoveryError,
    }
    try:
        exec(program.compile_program(str(boot["code"])), namespace)
        coroutine = namespace[program.ENTRY]()
        if not inspect.iscoroutine(coroutine):
            raise SyntaxError(messages.text("runtime.worker.yield"))
        value = await coroutine
    except BaseException as error:  # the program's failure, whatever it is, is its outcome
        summary: dict[str, Any] = {"kind": "exception", **program.error_summary(error)}
        if isinstance(error, ToolCallError):
            summary["tool_name"] = error.tool_name
        return wire.encode({"type": "done", "ok": False, "error": summary})
    try:
        lossless.check(value)
    except lossless.NotLossless as error:
        return wire.encode({"type": "done", "ok": False, "error": {"kind": "invalid-output", "message": str(error)}})
    frame = wire.encode({"type": "done", "ok": True, "value": value})
    budget = min(int(boot["limits"]["max_output_bytes"]), int(boot["limits"]["max_message_bytes"]))
    if len(frame) > budget:
        return wire.encode({"type": "done", "ok": False, "error": {"kind": "output-limit", "message": str(budget)}})
    return frame


if __name__ == "__main__":  # pragma: no cover - the host uses the starter in process.py
    main(sys.argv[1:])
