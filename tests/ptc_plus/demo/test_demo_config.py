"""The demo workspace's seeded config: management on with a small budget, never overwriting the user's file."""

from __future__ import annotations

from pathlib import Path

from ptc_plus.config import Disclosure, load_config
from ptc_plus.demo.workspace import seed_workspace


def test_seeded_config_turns_management_on(tmp_path: Path) -> None:
    seed_workspace(tmp_path)
    loaded = load_config(tmp_path, env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert loaded.issues == ()
    management = loaded.config.management
    assert management.enabled and management.budget_tokens == 700
    assert management.baseline[0] == "host:search_files"
    assert loaded.config.disclosure_of("host:notes_delete") is Disclosure.OFF
    # Statistics vote after three runs: repeated demos in one workspace show the plan learning.
    assert loaded.config.statistics.enabled and loaded.config.statistics.min_samples == 3


def test_an_existing_config_is_kept(tmp_path: Path) -> None:
    config = tmp_path / ".ptc-plus" / "config.toml"
    config.parent.mkdir()
    config.write_text("version = 1\n", encoding="utf-8")
    seed_workspace(tmp_path)
    assert config.read_text(encoding="utf-8") == "version = 1\n"
