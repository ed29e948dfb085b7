"""A spawn from an OCI bundle whose control channel is a Unix socket (the gVisor executor, ADR 0127).

:func:`materialize` makes a private scratch directory per spawn: the
bundle (``config.json``, owner-only, and an empty root), ``runsc``'s state
directory and a listening socket under a random name in a directory only
searchable by others (the sandbox uid must reach it; no other host user can
list it, and the name appears only in the owner-only bundle). :func:`accept`
takes the worker's one connection, or gives up when the child exits first;
the socket file is removed as soon as it is taken, and the whole directory
when the child is released.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import socket
import tempfile

import attrs

from ptc_plus.runtime.worker.main import CHANNEL_PREFIX

"""How the worker's command line names a socket instead of a descriptor (``worker/main.py``)."""


@attrs.frozen(kw_only=True)
class Materialized:
    argv: list[str]
    scratch: str
    listener: socket.socket
    socket_path: str


def materialize(argv: tuple[str, ...], bundle: str, channel_dir_inside: str) -> Materialized:
    scratch = tempfile.mkdtemp(prefix="ptc-gvisor-")
    try:
        os.chmod(scratch, 0o711)
        channel_dir = os.path.join(scratch, "channel")
        os.mkdir(channel_dir, 0o711)
        os.chmod(channel_dir, 0o711)
        name = secrets.token_hex(16)
        socket_path = os.path.join(channel_dir, name)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        try:
            listener.bind(socket_path)
            os.chmod(socket_path, 0o666)  # the worker runs as the sandbox uid
            listener.listen(2)
            listener.setblocking(False)
            bundle_dir = os.path.join(scratch, "bundle")
            os.makedirs(os.path.join(bundle_dir, "rootfs"), 0o755)
            channel = f"{CHANNEL_PREFIX}{channel_dir_inside}/{name}"
            config = (
                bundle.replace("{channel_dir}", channel_dir).replace("{read_fd}", channel).replace("{write_fd}", "-")
            )
            descriptor = os.open(os.path.join(bundle_dir, "config.json"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "w") as handle:
                handle.write(config)
            values = {"{state}": os.path.join(scratch, "state"), "{bundle}": bundle_dir, "{id}": "ptc-" + name[:12]}
            filled = [values.get(arg, arg) for arg in argv]
        except BaseException:
            listener.close()
            raise
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return Materialized(argv=filled, scratch=scratch, listener=listener, socket_path=socket_path)


async def accept(made: Materialized, exited: asyncio.Future[None]) -> tuple[int, int] | None:
    """``(read_fd, write_fd)`` of the host's channel ends, or ``None`` when the child exited first.

    The worker connects twice, in order (``worker/main.py``): the first connection carries the host's frames,
    the second the child's; a listening socket's queue keeps that order.
    """
    loop = asyncio.get_running_loop()
    gone: asyncio.Future[None] = asyncio.ensure_future(asyncio.shield(exited))
    ends: list[socket.socket] = []
    try:
        while len(ends) < 2:
            accepting = asyncio.ensure_future(loop.sock_accept(made.listener))
            try:
                await asyncio.wait([accepting, gone], return_when=asyncio.FIRST_COMPLETED)  # type: ignore[type-var]
            finally:
                if not accepting.done():
                    accepting.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await accepting
            if accepting.cancelled() or accepting.exception() is not None:
                for end in ends:
                    end.close()
                return None
            ends.append(accepting.result()[0])
    finally:
        gone.cancel()
        made.listener.close()
        with contextlib.suppress(OSError):
            os.unlink(made.socket_path)
    to_child, from_child = ends
    return from_child.detach(), to_child.detach()


def remove(scratch: str) -> None:
    shutil.rmtree(scratch, ignore_errors=True)
