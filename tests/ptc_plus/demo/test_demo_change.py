"""The demo's config change goes through the real editor and never outlives the run in a kept workspace."""

from __future__ import annotations

from pathlib import Path

from ptc_plus.config import Disclosure, load_config
from ptc_plus.config.editor import set_capability
from ptc_plus.demo.change import change_config, restore_config
from ptc_plus.demo.workspace import DEMO_CONFIG, seed_workspace


def _config(workspace: Path) -> Path:
    return workspace / ".ptc-plus" / "config.toml"


def _disclosure(workspace: Path, identity: str) -> Disclosure | None:
    return load_config(workspace, env={"XDG_CONFIG_HOME": str(workspace / "xdg")}).config.disclosure_of(identity)


def test_the_change_is_what_capabilities_set_writes_and_is_undone_by_the_same_editor(tmp_path: Path) -> None:
    seed_workspace(tmp_path)
    change = change_config(tmp_path)
    assert [edit.command for edit in change.edits] == [
        "ptc-plus capabilities set host:convert_units full",
        "ptc-plus capabilities set host:write_file off",
    ]
    assert _disclosure(tmp_path, "host:convert_units") is Disclosure.FULL
    assert _disclosure(tmp_path, "host:write_file") is Disclosure.OFF
    undone = restore_config(tmp_path, change)
    assert [edit.undo for edit in undone] == [
        "ptc-plus capabilities set host:write_file inherit",
        "ptc-plus capabilities set host:convert_units inherit",
    ]
    assert _disclosure(tmp_path, "host:convert_units") is None and _disclosure(tmp_path, "host:write_file") is None
    restored = _config(tmp_path).read_text(encoding="utf-8")
    # The editor keeps the blank line that set the removed table off: content as seeded, nothing else.
    assert restored.rstrip("\n") == DEMO_CONFIG.rstrip("\n")
    restore_config(tmp_path, change_config(tmp_path))
    assert _config(tmp_path).read_text(encoding="utf-8") == restored  # a second run leaves no more trace


def test_an_edit_made_meanwhile_survives_the_undo(tmp_path: Path) -> None:
    seed_workspace(tmp_path)
    change = change_config(tmp_path)
    set_capability(tmp_path, "host:notes_search", "off")  # the user, while the demo runs
    restore_config(tmp_path, change)
    assert _disclosure(tmp_path, "host:notes_search") is Disclosure.OFF
    assert _disclosure(tmp_path, "host:convert_units") is None and _disclosure(tmp_path, "host:write_file") is None


def test_a_choice_the_user_already_made_is_left_alone(tmp_path: Path) -> None:
    seed_workspace(tmp_path)
    set_capability(tmp_path, "host:write_file", "off")
    kept = _config(tmp_path).read_text(encoding="utf-8")
    change = change_config(tmp_path)
    assert [edit.changed for edit in change.edits] == [True, False]
    assert [edit.identity for edit in restore_config(tmp_path, change)] == ["host:convert_units"]
    assert _config(tmp_path).read_text(encoding="utf-8").rstrip("\n") == kept.rstrip("\n")
    assert _disclosure(tmp_path, "host:write_file") is Disclosure.OFF
