"""Tests decide their own environment: what a developer's machine sets must not leak into them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def isolate_from_the_machine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Unset every ``PTC_*`` variable and point ``XDG_CONFIG_HOME`` at ``tmp_path/xdg`` (returned, not created).

    The user config file is then ``<returned>/ptc-plus/config.toml``, absent until a test writes it. The user
    state (the MCP servers' ``tools/list`` snapshots, ADR 0097) goes to ``tmp_path/xdg-state``: one test's
    snapshot never spares another test's server its start.
    """
    for key in list(os.environ):
        if key.startswith("PTC_"):
            monkeypatch.delenv(key)
    home = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))
    return home
