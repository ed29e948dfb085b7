"""The plugin's error hierarchy: one root, stable codes, messages from ``locale/``.

Codes are ``PTC-<area><nnn>``: 1xxx host glue and CLI, 2xxx runtime,
3xxx SDK and catalog, 4xxx configuration, gate and plan, 5xxx statistics,
6xxx refresh and previews; codes ``PTC-Rnnn`` belong to the REPL kernel.
Each code's message lives in both locales under the key ``error.<code>``.
"""

from __future__ import annotations

from typing import Any

from ptc_plus.i18n import message


class PtcError(Exception):
    """Root of every error PTC Plus raises on purpose.

    :ivar code: stable code, e.g. ``PTC-4001``.
    :ivar params: values substituted into the localized message.
    """

    code: str = "PTC-1000"

    def __init__(self, code: str | None = None, /, **params: Any) -> None:
        self.code = code or type(self).code
        self.params = params
        super().__init__(self.message("en"))

    def message(self, lang: str | None = None) -> str:
        """The localized message (default locale from the environment); a ``suggestion`` parameter (the
        nearest known name, :func:`ptc_plus.spelling.closest`) adds the ``ptc.did-you-mean`` clause."""
        text = message(f"error.{self.code}", lang, **self.params)
        suggestion = self.params.get("suggestion")
        return f"{text} {message('ptc.did-you-mean', lang, suggestion=suggestion)}" if suggestion else text

    def to_json(self, lang: str | None = None) -> dict[str, Any]:
        """The pinned serialized shape: ``{"code", "message", "params"}``."""
        return {"code": self.code, "message": self.message(lang), "params": {k: str(v) for k, v in self.params.items()}}


class UsageError(PtcError):
    """The command line or an argument was wrong (CLI exit code 2)."""

    code = "PTC-1001"
