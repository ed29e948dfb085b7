"""Plugin loading in a fixed order: built-ins, entry points minus a blocklist, then ``check_pending``."""

from __future__ import annotations

import os
from collections.abc import Sequence

import pluggy

from hookspecs import specs
from hookspecs.markers import ENTRY_POINT_GROUP, PROJECT_NAME

BLOCKLIST_ENV = "AGENT_HOST_DISABLE_PLUGINS"
"""Comma-separated entry-point names the host must not load."""


def blocked_names(environ: os._Environ[str] | dict[str, str] | None = None) -> frozenset[str]:
    raw = (environ if environ is not None else os.environ).get(BLOCKLIST_ENV, "")
    return frozenset(name.strip() for name in raw.split(",") if name.strip())


def build_plugin_manager(
    builtins: Sequence[tuple[str, object]],
    extra: Sequence[tuple[str, object]] = (),
    *,
    load_entry_points: bool = True,
) -> pluggy.PluginManager:
    """A plugin manager with the contract's hookspecs and plugins loaded in the fixed order.

    ``builtins`` are the host's own plugins; ``extra`` are plugins handed in
    by the embedding program (loaded after entry points). Unknown hook
    names or mismatched signatures fail here (``check_pending``), not later.
    """
    pm = pluggy.PluginManager(PROJECT_NAME)
    pm.add_hookspecs(specs)
    for name, plugin in builtins:
        pm.register(plugin, name=name)
    if load_entry_points:
        for name in blocked_names():
            pm.set_blocked(name)
        # pluggy skips blocked names and records each plugin's distribution.
        pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
    for name, plugin in extra:
        pm.register(plugin, name=name)
    pm.check_pending()
    return pm
