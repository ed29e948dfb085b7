"""Errors ``ptc-plus chat`` raises on purpose (``PTC-73xx``); none of them carries the API key."""

from __future__ import annotations

from ptc_plus.errors import PtcError, UsageError


class MissingModel(UsageError):
    """Neither ``--model`` nor ``OPENAI_MODEL`` names the model."""

    code = "PTC-7301"


class MissingKey(UsageError):
    """``--api-key-env`` names a variable that is unset or empty.

    :ivar params: ``variable`` (its name, never a value).
    """

    code = "PTC-7302"


class UnknownSession(UsageError):
    """``--resume`` names no session of this workspace.

    :ivar params: ``session``, ``directory``.
    """

    code = "PTC-7303"


class ChatTurnFailed(PtcError):
    """The one-shot turn got no answer (the step failure was shown above it).

    :ivar params: ``session``. Raised as ``PTC-7306`` (no params) when no request reached the model: the
        new session was not kept, so there is none to resume.
    """

    code = "PTC-7304"


class BadBaseUrl(UsageError):
    """``--base-url`` (or ``OPENAI_BASE_URL``) is not an ``http://`` or ``https://`` URL.

    :ivar params: ``url``, ``fixed`` (the same with ``http://`` in front).
    """

    code = "PTC-7305"
