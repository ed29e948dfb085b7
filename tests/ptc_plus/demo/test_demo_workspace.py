"""Where the demo may run: an empty directory or a previous demo's; anything else is refused untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptc_plus.demo.errors import DemoWorkspaceInUse, DemoWorkspaceNotADirectory
from ptc_plus.demo.workspace import MARKER, claim_workspace, demo_workspace
from ptc_plus.errors import UsageError


def test_an_empty_directory_is_claimed_and_marked(tmp_path: Path) -> None:
    claim_workspace(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == [MARKER]


def test_a_previous_demos_directory_is_used_again(tmp_path: Path) -> None:
    with demo_workspace(tmp_path) as (root, temporary):
        assert (root, temporary) == (tmp_path, False)
    (tmp_path / "README.md").write_text("edited by the user\n", encoding="utf-8")
    with demo_workspace(tmp_path):
        pass
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == "edited by the user\n"


def test_a_directory_holding_something_else_is_refused_untouched(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine\n", encoding="utf-8")
    with pytest.raises(DemoWorkspaceInUse) as excinfo, demo_workspace(tmp_path):
        pytest.fail("the demo must not run here")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    error = excinfo.value
    assert isinstance(error, UsageError) and error.code == "PTC-1101"
    assert str(tmp_path) in error.message("en") and "--workspace" in error.message("en")
    assert str(tmp_path) in error.message("zh") and "不是空目录" in error.message("zh")


def test_a_hidden_file_counts_as_something_else(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    with pytest.raises(DemoWorkspaceInUse):
        claim_workspace(tmp_path)


@pytest.mark.parametrize("where", ["a-file", "missing-parent/ws"])
def test_what_is_not_a_directory_is_refused_and_nothing_is_made(tmp_path: Path, where: str) -> None:
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    with pytest.raises(DemoWorkspaceNotADirectory) as excinfo:
        claim_workspace(tmp_path / where)
    assert excinfo.value.code == "PTC-1102" and isinstance(excinfo.value, UsageError)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]
    assert excinfo.value.message("zh") != excinfo.value.message("en")


def test_a_missing_directory_is_refused_and_not_made(tmp_path: Path) -> None:
    # --workspace means an existing directory: a typo must not become a workspace.
    with pytest.raises(DemoWorkspaceNotADirectory):
        claim_workspace(tmp_path / "ws")
    assert list(tmp_path.iterdir()) == []


def test_the_temporary_workspace_is_removed_even_on_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    with pytest.raises(KeyboardInterrupt), demo_workspace(None) as (root, temporary):
        assert temporary and root.parent == tmp_path and (root / "docs" / "routes.md").is_file()
        raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []
