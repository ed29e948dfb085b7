"""Where the two config files live."""

from __future__ import annotations

import enum
import os
from collections.abc import Mapping
from pathlib import Path

FILE_NAME = "config.toml"
WORKSPACE_DIR = ".ptc-plus"
APP_DIR = "ptc-plus"


class Scope(enum.StrEnum):
    """Which config file: the user's own, or a workspace's."""

    USER = "user"
    WORKSPACE = "workspace"


def workspace_config_file(workspace: Path) -> Path:
    """``<workspace>/.ptc-plus/config.toml``."""
    return workspace / WORKSPACE_DIR / FILE_NAME


def user_config_file(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/ptc-plus/config.toml``, else ``~/.config/ptc-plus/config.toml``.

    A relative ``XDG_CONFIG_HOME`` is ignored, as the XDG base-directory
    specification requires.
    """
    env = os.environ if env is None else env
    xdg = env.get("XDG_CONFIG_HOME", "")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / APP_DIR / FILE_NAME
    home = env.get("HOME") or str(Path.home())
    return Path(home) / ".config" / APP_DIR / FILE_NAME
