"""The value in force for every key, and where it came from (``config show``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ptc_plus.config.keypath import join
from ptc_plus.config.keys import CONSENT_TABLE, SERVERS_TABLE, config_keys, plain_value
from ptc_plus.config.loader import LoadedConfig

DEFAULT = "default"
"""The source of a key no file set."""
CONFIG_PROBLEM = "config-problem"
"""The source of ``statistics.enabled`` when a problem in ``[statistics]`` switched statistics off (ADR 0033)."""


@attrs.frozen(kw_only=True)
class EffectiveKey:
    """One key in force: its dotted ``key``, ``value`` (JSON-ready; ``None``: not set), and its ``source``:
    a :class:`~.paths.Scope` value, :data:`DEFAULT` or :data:`CONFIG_PROBLEM`; ``file`` is the file that set it."""

    key: str
    value: Any
    source: str
    file: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "value": self.value, "source": self.source, "file": self.file}


def effective_keys(loaded: LoadedConfig, scopes: Mapping[str, str]) -> tuple[EffectiveKey, ...]:
    """Every model key of ``loaded.config`` (each configured capability too), in file order.

    ``scopes`` maps a config file (as in ``loaded.files``) to its scope name.
    """
    config = loaded.config
    found: list[EffectiveKey] = []
    for key in config_keys():
        if key.section == "capabilities":
            for identity, choice in sorted(config.capabilities.items()):
                found.append(_entry(loaded, scopes, join("capabilities", identity, key.name), choice.disclosure))
            continue
        if key.table == SERVERS_TABLE:
            for name, server in sorted(config.mcp.servers.items()):
                found.append(_entry(loaded, scopes, join("mcp", "servers", name, key.name), getattr(server, key.name)))
            continue
        if key.table == CONSENT_TABLE:
            for place, consents in sorted(config.mcp.consent.items()):
                for name, mark in sorted(consents.items()):
                    found.append(_entry(loaded, scopes, join("mcp", "consent", place, name), mark))
            continue
        owner = getattr(config, key.section) if key.section else config
        path = join(key.section, key.name) if key.section else key.name
        found.append(_entry(loaded, scopes, path, getattr(owner, key.name)))
    return tuple(found)


def _entry(loaded: LoadedConfig, scopes: Mapping[str, str], path: str, value: Any) -> EffectiveKey:
    if path == "statistics.enabled" and loaded.statistics_disabled:
        return EffectiveKey(key=path, value=False, source=CONFIG_PROBLEM)
    file = loaded.origins.get(path)
    if file is None:  # a table value (a server's ``env``) is set key by key: the file of its last key names it
        file = next((f for key, f in reversed(list(loaded.origins.items())) if key.startswith(path + ".")), None)
    source = scopes.get(file, DEFAULT) if file is not None else DEFAULT
    return EffectiveKey(key=path, value=plain_value(value), source=source, file=file)
