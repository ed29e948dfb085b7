"""A racing thread for host-side workspace tests: what a hostile program does to the workspace while a tool runs."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import random
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)


def exchange(first: Path, second: Path) -> None:
    """Atomically swap two directory entries (``renameat2(..., RENAME_EXCHANGE)``)."""
    if _libc.renameat2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) != 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error), str(first))


@contextmanager
def swapping(first: Path, second: Path) -> Iterator[list[int]]:
    """A thread swapping ``first`` and ``second`` as fast as it can until the block ends; yields [swaps]."""
    stop = threading.Event()
    count = [0]

    def run() -> None:
        while not stop.is_set():
            # One or two swaps per turn, at random: a fixed rhythm can lock into step with the tool's
            # own system calls and always show it the same side.
            for _ in range(random.randint(1, 2)):
                exchange(first, second)
                count[0] += 1

    # Hand the GIL over often, so that swaps land between the tool's own steps, not only at its I/O.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield count
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)
