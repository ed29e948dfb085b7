"""``set_management_enabled``: the switch written only over the value the caller saw (ADR 0126)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptc_plus.config import ConfigEditConflict, load_config, set_management_enabled

TEXT = "version = 1\n\n# the switch, decided by the team\n[management]\nenabled = true  # on for now\n"


def _workspace(tmp_path: Path, text: str | None) -> Path:
    (tmp_path / ".ptc-plus").mkdir()
    if text is not None:
        (tmp_path / ".ptc-plus" / "config.toml").write_text(text, encoding="utf-8")
    return tmp_path


def test_it_sets_the_switch_over_the_value_seen_and_keeps_comments(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path, TEXT)
    done = set_management_enabled(workspace, False, expected=True)
    text = (workspace / ".ptc-plus" / "config.toml").read_text(encoding="utf-8")
    assert done.changed and done.previous == "true"
    assert text == TEXT.replace("enabled = true", "enabled = false")
    assert load_config(workspace, user_file=tmp_path / "none.toml").config.management.enabled is False


def test_it_refuses_when_the_file_holds_another_value_and_writes_nothing(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path, TEXT)
    with pytest.raises(ConfigEditConflict) as refused:
        set_management_enabled(workspace, False, expected=None)  # the page saw no switch; it is set now
    assert refused.value.params["theirs"] == "true"
    assert refused.value.code == "PTC-4024"
    assert (workspace / ".ptc-plus" / "config.toml").read_text(encoding="utf-8") == TEXT


def test_it_adds_the_section_to_a_file_without_one(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path, None)
    set_management_enabled(workspace, False, expected=None)
    assert load_config(workspace, user_file=tmp_path / "none.toml").config.management.enabled is False
