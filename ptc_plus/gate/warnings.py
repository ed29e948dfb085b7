"""Gate warnings (codes PTC-4100..PTC-4199): a setting was unusable and a safe value was taken.

Warnings are values, rendered in any locale; they never stop evaluation.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from ptc_plus.i18n import message

INVALID_MODE = "PTC-4101"
INVALID_ROLLOUT_PERCENT = "PTC-4102"
INVALID_DEBUG = "PTC-4103"
INVALID_SEQUENTIAL = "PTC-4104"
CONFIG_BLOCKER = "PTC-4105"


@attrs.frozen(kw_only=True)
class SettingSource:
    """Where a gate setting came from: an environment variable, or a ``[gate]`` key of a file."""

    env_var: str
    file: str | None = None
    key: str = ""

    def describe(self, lang: str | None = None) -> str:
        if self.file is None:
            return message("gate.source.env", lang, name=self.env_var)
        return message("gate.source.config", lang, file=self.file, setting=self.key)


@attrs.frozen(kw_only=True)
class GateWarning:
    """One warning: ``code`` names its ``error.<code>`` message; ``value`` is the raw text refused."""

    code: str
    value: str = ""
    source: SettingSource | None = None
    extra: Mapping[str, str] = attrs.field(factory=dict)

    def message(self, lang: str | None = None) -> str:
        source = self.source.describe(lang) if self.source else ""
        return message(f"error.{self.code}", lang, value=self.value, source=source, **self.extra)

    def render(self, lang: str | None = None) -> str:
        """``"<code>: <message>"``, the form the CLI's JSON carries."""
        return f"{self.code}: {self.message(lang)}"
