"""A command's standard output as a person sees it: written to a pseudo-terminal of a given width."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import termios
from collections.abc import Mapping, Sequence


def terminal_output(
    argv: Sequence[str], env: Mapping[str, str], *, columns: int | None = None, timeout: float = 120
) -> str:
    """Run ``argv`` with its standard output on a new pseudo-terminal (``columns`` wide when given) and return
    what it wrote, line ends as ``\\n``; the command must exit 0 (its stderr is the assertion's message)."""
    leader, follower = pty.openpty()
    if columns is not None:
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    try:
        proc = subprocess.Popen(list(argv), stdout=follower, stderr=subprocess.PIPE, env=dict(env))
    finally:
        os.close(follower)
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the other side closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    _, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err
    return b"".join(chunks).decode().replace("\r\n", "\n")
