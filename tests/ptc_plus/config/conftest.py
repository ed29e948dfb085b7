from __future__ import annotations

from pathlib import Path

import pytest

from ptc_plus.config import LoadedConfig, load_config


class ConfigFiles:
    """A workspace and a user config file under ``tmp_path``, written on demand."""

    def __init__(self, root: Path) -> None:
        self.workspace = root / "ws"
        self.workspace_file = self.workspace / ".ptc-plus" / "config.toml"
        self.user_file = root / "user" / "config.toml"

    def write(self, *, workspace: str | None = None, user: str | None = None) -> None:
        for path, text in ((self.workspace_file, workspace), (self.user_file, user)):
            if text is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")

    def load(self) -> LoadedConfig:
        return load_config(self.workspace, user_file=self.user_file)


@pytest.fixture
def files(tmp_path: Path) -> ConfigFiles:
    return ConfigFiles(tmp_path)
