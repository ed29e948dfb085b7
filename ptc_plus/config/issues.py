"""One problem found in one config file, renderable in every locale.

Issues are values, not exceptions: loading reports all of them and keeps
every valid key. A strict caller turns them into :class:`ConfigInvalid`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from ptc_plus.config.errors import (
    ConfigError,
    ConfigSyntaxError,
    ConfigTooDeep,
    ConfigUnreadable,
    ConfigValueInvalid,
    ConfigVersionUnsupported,
)
from ptc_plus.i18n import message

VALUE_INVALID = ConfigValueInvalid.code
_FILE_ERRORS: dict[str, type[ConfigError]] = {
    kind.code: kind for kind in (ConfigUnreadable, ConfigSyntaxError, ConfigTooDeep, ConfigVersionUnsupported)
}


@attrs.frozen(kw_only=True)
class ConfigIssue:
    """A problem at ``path`` (dotted TOML key path, ``""`` for the whole file) of ``file``.

    For a key problem ``code`` is PTC-4010 and ``reason`` names a
    ``config.reason.<reason>`` message; for a file problem (unreadable,
    not TOML, unsupported version) ``code`` is that error's code and
    ``params`` fill its message, whose ``detail`` is re-rendered from the
    ``config.<reason>`` message when ``reason`` is set (our own words, e.g.
    ``unreadable.not-utf8``; a parser's text has no reason). ``line`` and ``column`` (1-based) say where
    in the file, when known; messages then name ``file:line:column``.
    """

    file: str
    path: str
    code: str = VALUE_INVALID
    reason: str = ""
    params: Mapping[str, str] = attrs.field(factory=dict)
    line: int | None = None
    column: int | None = None

    @property
    def where(self) -> str:
        """``file``, ``file:line`` or ``file:line:column``: the form terminals and editors link to."""
        if self.line is None:
            return self.file
        if self.column is None:
            return f"{self.file}:{self.line}"
        return f"{self.file}:{self.line}:{self.column}"

    @classmethod
    def file_problem(cls, kind: type[ConfigError], file: str, path: str = "", **params: str) -> ConfigIssue:
        """A whole-file problem (``kind`` is :class:`ConfigUnreadable`, :class:`ConfigSyntaxError` or
        :class:`ConfigVersionUnsupported`); ``params`` fill that error's message."""
        return cls(file=file, path=path, code=kind.code, params=params)

    def reason_text(self, lang: str | None = None) -> str:
        """Why the key is invalid, in ``lang``."""
        params = dict(self.params)
        if "expected" in params:
            params["expected"] = message(f"config.type.{params['expected']}", lang)
        reason = self.reason
        if reason in ("unknown-key", "choice") and "suggestion" in params:
            reason += "-suggestion"
        return message(f"config.reason.{reason}", lang, **params)

    def message(self, lang: str | None = None) -> str:
        """The full localized message naming file, key path and reason."""
        if self.code != VALUE_INVALID:
            params = dict(self.params)
            if self.reason:  # a file problem whose detail is one of ours, not a library's text
                params["detail"] = message(f"config.{self.reason}", lang, **self.params)
            return message(f"error.{self.code}", lang, **{**params, "file": self.where})
        return message(f"error.{self.code}", lang, file=self.where, path=self.path, reason=self.reason_text(lang))

    def to_error(self) -> ConfigError:
        """The issue as a raisable error with the same code."""
        if self.code != VALUE_INVALID:
            return _FILE_ERRORS.get(self.code, ConfigError)(self.code, **{**self.params, "file": self.where})
        return ConfigValueInvalid(file=self.where, path=self.path, reason=self.reason_text("en"))

    def to_json(self, lang: str | None = None) -> dict[str, str | int | None]:
        """``{"code", "file", "line", "column", "path", "reason", "message"}``; ``line``/``column`` may be null."""
        return {
            "code": self.code,
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "path": self.path,
            "reason": self.reason,
            "message": self.message(lang),
        }


class ConfigValueRejected(ConfigError):
    """A save of one key that the config checker rejects: nothing was written (params: ``file``, ``setting``,
    ``reason``: the checker's first reason, in English). :attr:`issues` are the checker's findings the edit
    would have caused, to render in any language beside the field (ADR 0129). It lives here, beside
    :class:`ConfigIssue`, because it carries them (``errors`` cannot import this module)."""

    code = "PTC-4025"

    def __init__(self, issues: Sequence[ConfigIssue], **params: Any) -> None:
        self.issues = tuple(issues)
        super().__init__(**params)
