"""What ``capabilities set`` leaves on disk: the usual mode, blank lines between tables, no lock file, and no
write through a symlink the program may have planted (ADR 0050, ADR 0062)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from ptc_plus.config import set_capability, workspace_config_file
from ptc_plus.config.errors import ConfigEditRefused


@pytest.fixture
def usual_umask() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_file_gets_0644_under_the_usual_umask(tmp_path: Path, usual_umask: None) -> None:
    set_capability(tmp_path, "host:a", "full")
    assert mode(workspace_config_file(tmp_path)) == 0o644


def test_an_existing_file_keeps_its_mode(tmp_path: Path, usual_umask: None) -> None:
    path = workspace_config_file(tmp_path)
    path.parent.mkdir()
    path.write_text("version = 1\n", encoding="utf-8")
    for kept in (0o664, 0o600):  # wider than the umask allows, and narrower
        path.chmod(kept)
        set_capability(tmp_path, "host:a", "off" if kept == 0o600 else "full")
        assert mode(path) == kept


def test_no_lock_file_is_left_in_the_workspace(tmp_path: Path) -> None:
    set_capability(tmp_path, "host:a", "full")
    set_capability(tmp_path, "host:a", "inherit")
    assert sorted(os.listdir(tmp_path / ".ptc-plus")) == ["config.toml"]
    assert sorted(os.listdir(tmp_path)) == [".ptc-plus"]


def test_inherit_in_a_workspace_without_config_creates_nothing(tmp_path: Path) -> None:
    assert set_capability(tmp_path, "host:a", "inherit").changed is False
    assert os.listdir(tmp_path) == []


def test_new_tables_are_set_off_by_a_blank_line(tmp_path: Path) -> None:
    path = workspace_config_file(tmp_path)
    path.parent.mkdir()
    path.write_text('version = 1\n[capabilities."host:a"]\ndisclosure = "off"\n[runtime]\ntimeout_s = 5\n', "utf-8")
    set_capability(tmp_path, "host:b", "full")
    set_capability(tmp_path, "host:c", "on-demand")
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if line.startswith("[") and line != '[capabilities."host:a"]':  # the user's own layout is theirs
            assert lines[index - 1] == "", text


def test_the_first_table_of_a_new_file_follows_a_blank_line(tmp_path: Path) -> None:
    set_capability(tmp_path, "host:a", "full")
    assert workspace_config_file(tmp_path).read_text(encoding="utf-8") == (
        'version = 1\n\n[capabilities."host:a"]\ndisclosure = "full"\n'
    )


def test_a_symlinked_ptc_plus_directory_is_refused_not_followed(tmp_path: Path) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    (workspace / ".ptc-plus").symlink_to(outside)
    with pytest.raises(ConfigEditRefused):
        set_capability(workspace, "host:a", "full")
    assert os.listdir(outside) == []


def test_a_symlinked_config_file_is_refused_not_written_through(tmp_path: Path) -> None:
    workspace, target = tmp_path / "ws", tmp_path / "elsewhere.toml"
    (workspace / ".ptc-plus").mkdir(parents=True)
    target.write_text("version = 1\n", encoding="utf-8")
    (workspace / ".ptc-plus" / "config.toml").symlink_to(target)
    with pytest.raises(ConfigEditRefused):
        set_capability(workspace, "host:a", "full")
    assert target.read_text(encoding="utf-8") == "version = 1\n"


def test_a_missing_workspace_is_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigEditRefused):
        set_capability(tmp_path / "nope", "host:a", "full")
    assert not (tmp_path / "nope").exists()
