"""Errors of the SDK renderer (codes PTC-3000..3099)."""

from __future__ import annotations

from ptc_plus.errors import PtcError


class InvalidToolsFile(PtcError):
    """A tool-definitions file could not be read or has the wrong shape.

    :param path: the file.
    :param detail: what is wrong.
    """

    code = "PTC-3001"


class ToolSetUnavailable(PtcError):
    """A ``--tools`` value names no tool set that could be loaded; this code: its module or factory raised
    (params ``name``, ``detail``). The subclasses below say the other reasons."""

    code = "PTC-3002"


class ToolSetNotRecognized(ToolSetUnavailable):
    """A ``--tools`` value that is neither ``demo``, a file nor ``module:factory`` (param ``name``)."""

    code = "PTC-3004"


class ToolModuleNotFound(ToolSetUnavailable):
    """The module of ``module:factory`` is neither in the current directory nor installed (params ``name``,
    ``module``, ``directory``)."""

    code = "PTC-3005"


class ToolFactoryResult(ToolSetUnavailable):
    """The factory returned something other than tool definitions (params ``name``, ``type``)."""

    code = "PTC-3006"


class ToolNotImplemented(PtcError):
    """A tool from a JSON tools file was called: the file gives its contract only (params ``tool``, ``path``).

    Tools files describe tools; a run that calls one gets this as the call's failure (the program sees a
    ``ToolCallError`` with this code), never a made-up value.
    """

    code = "PTC-3003"
