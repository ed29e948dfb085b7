"""Running a child process without root's right to ignore file modes (the suite runs as root in CI)."""

from __future__ import annotations

import ctypes
import os

_PR_CAPBSET_DROP = 24
_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH = 1, 2


def without_dac_override() -> None:
    """``preexec_fn`` for a child in which mode 000 means unreadable and 0555 unwritable, even for root.

    The capabilities leave the bounding set, so they are gone from the child after ``exec``.
    """
    if os.geteuid() == 0:
        libc = ctypes.CDLL(None, use_errno=True)
        for capability in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
            if libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")
