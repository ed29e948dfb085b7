"""Errors of the reference host: one root, stable ``HOST-xxxx`` codes, localized messages."""

from __future__ import annotations

from typing import Any

from hookspecs.i18n import message


class HostError(Exception):
    """Root of the reference host's deliberate errors.

    :ivar code: stable code such as ``HOST-0102``; its message is ``error.<code>`` in ``locale/``.
    """

    def __init__(self, code: str, /, **params: Any) -> None:
        self.code = code
        self.params = params
        super().__init__(f"{code}: {self.message('en')}")

    def message(self, lang: str | None = None) -> str:
        return message(f"error.{self.code}", lang, **self.params)
