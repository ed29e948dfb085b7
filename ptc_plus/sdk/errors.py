"""Errors of the SDK renderer (codes PTC-3000..3099)."""

from __future__ import annotations

from ptc_plus.errors import PtcError


class InvalidToolsFile(PtcError):
    """A tool-definitions file could not be read or has the wrong shape.

    :param path: the file.
    :param detail: what is wrong.
    """

    code = "PTC-3001"
