"""Running without root's right to ignore file modes (the suite runs as root in CI): in a child, or in this thread."""

from __future__ import annotations

import ctypes
import os
from collections.abc import Iterator
from contextlib import contextmanager

_PR_CAPBSET_DROP = 24
_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH = 1, 2
_LINUX_CAPABILITY_VERSION_3 = 0x20080522


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def without_dac_override() -> None:
    """``preexec_fn`` for a child in which mode 000 means unreadable and 0555 unwritable, even for root.

    The capabilities leave the bounding set, so they are gone from the child after ``exec``.
    """
    if os.geteuid() == 0:
        libc = ctypes.CDLL(None, use_errno=True)
        for capability in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
            if libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


@contextmanager
def dac_override_dropped() -> Iterator[None]:
    """Inside the block, this thread (and any thread it starts) is refused what file modes refuse, even as root.

    The two capabilities leave only the *effective* set of the calling thread (capabilities are per thread
    on Linux; a thread starts with its creator's), so the kernel checks modes as for any user, exactly as in
    a child started with :func:`without_dac_override`; they stay *permitted* and come back when the block
    ends. Not root: nothing to drop, modes already apply.
    """
    if os.geteuid() != 0:
        yield
        return
    libc = ctypes.CDLL(None, use_errno=True)
    header, data = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0), (_CapData * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capget")
    saved = data[0].effective
    data[0].effective = saved & ~((1 << _CAP_DAC_OVERRIDE) | (1 << _CAP_DAC_READ_SEARCH))
    if libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capset")
    try:
        yield
    finally:
        data[0].effective = saved
        if libc.capset(ctypes.byref(header), data) != 0:
            raise OSError(ctypes.get_errno(), "capset (restoring)")
