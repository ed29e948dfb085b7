"""``set_config_value``: one key of either file, written only over the value the caller saw, checked by the
config checker before anything is written (ADR 0129)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from ptc_plus.config import (
    ConfigEditConflict,
    ConfigValueRejected,
    Scope,
    file_values,
    init_config,
    load_config,
    set_capability,
    set_config_value,
)
from ptc_plus.config.user_file import locked_user_file

WORKSPACE = "version = 1\n\n# budgets, decided by the team\n[management]\nbudget_tokens = 1234  # keep\n"
USER = "# mine\n[statistics]\nwindow = 40  # a long memory\n"


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "xdg"
    (home / "ptc-plus").mkdir(parents=True)
    (home / "ptc-plus" / "config.toml").write_text(USER, encoding="utf-8")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    root = tmp_path / "project"
    (root / ".ptc-plus").mkdir(parents=True)
    (root / ".ptc-plus" / "config.toml").write_text(WORKSPACE, encoding="utf-8")
    return root


def _text(workspace: Path, scope: Scope) -> str:
    path = workspace / ".ptc-plus" / "config.toml"
    if scope is Scope.USER:
        path = workspace.parent / "xdg" / "ptc-plus" / "config.toml"
    return path.read_text(encoding="utf-8")


def test_it_replaces_a_value_of_the_user_file_and_keeps_its_comments(workspace: Path) -> None:
    done = set_config_value(Scope.USER, workspace, ("statistics", "window"), 60, expected=40)
    assert done.changed and done.previous == "40"
    assert _text(workspace, Scope.USER) == USER.replace("window = 40", "window = 60")
    assert _text(workspace, Scope.WORKSPACE) == WORKSPACE
    assert load_config(workspace).config.statistics.window == 60


def test_it_adds_a_section_to_the_workspace_file_set_off_by_a_blank_line(workspace: Path) -> None:
    set_config_value(Scope.WORKSPACE, workspace, ("statistics", "threshold"), 0.25, expected=None)
    assert _text(workspace, Scope.WORKSPACE) == WORKSPACE + "\n[statistics]\nthreshold = 0.25\n"


def test_none_removes_the_key_and_a_list_is_written_in_order(workspace: Path) -> None:
    baseline = ("management", "baseline")
    set_config_value(Scope.WORKSPACE, workspace, baseline, ["host:write_file", "host:read_file"], expected=None)
    assert file_values(Scope.WORKSPACE, workspace)["management"]["baseline"] == ["host:write_file", "host:read_file"]
    set_config_value(Scope.WORKSPACE, workspace, baseline, None, expected=["host:write_file", "host:read_file"])
    assert _text(workspace, Scope.WORKSPACE) == WORKSPACE


def test_a_file_that_changed_since_it_was_read_is_refused_with_its_value(workspace: Path) -> None:
    with pytest.raises(ConfigEditConflict) as refused:
        set_config_value(Scope.USER, workspace, ("statistics", "window"), 10, expected=None)
    assert refused.value.params == {
        "file": str(workspace.parent / "xdg" / "ptc-plus" / "config.toml"),
        "setting": "statistics.window",
        "theirs": "40",
    }
    assert _text(workspace, Scope.USER) == USER


def test_true_is_not_one_when_comparing_what_was_seen(workspace: Path) -> None:
    set_config_value(Scope.WORKSPACE, workspace, ("statistics", "enabled"), True, expected=None)
    with pytest.raises(ConfigEditConflict):
        set_config_value(Scope.WORKSPACE, workspace, ("statistics", "enabled"), False, expected=1)


@pytest.mark.parametrize(
    ("key", "value", "reason", "path"),
    [
        (("statistics", "window"), "abc", "type", "statistics.window"),
        (("statistics", "window"), -3, "minimum", "statistics.window"),
        (("statistics", "threshold"), 1.5, "range", "statistics.threshold"),
        (("statistics", "threshold"), float("nan"), "finite", "statistics.threshold"),
        (("management", "budget_tokens"), -1, "minimum", "management.budget_tokens"),
        # min_samples (default 5) above a window of 3: the loader's cross-key rule, both files combined
        (("statistics", "window"), 3, "min-samples-above-window", "statistics.min_samples"),
    ],
)
def test_a_value_the_checker_refuses_is_never_written(
    workspace: Path, key: tuple[str, ...], value: object, reason: str, path: str
) -> None:
    seen = file_values(Scope.WORKSPACE, workspace).get(key[0], {}).get(key[1])
    with pytest.raises(ConfigValueRejected) as refused:
        set_config_value(Scope.WORKSPACE, workspace, key, value, expected=seen)
    assert [(issue.path, issue.reason) for issue in refused.value.issues] == [(path, reason)]
    assert refused.value.code == "PTC-4025"
    assert _text(workspace, Scope.WORKSPACE) == WORKSPACE


def test_a_problem_already_in_the_file_does_not_block_an_unrelated_edit(workspace: Path) -> None:
    broken = WORKSPACE + "\n[context]\npreview_tokens = 0\n"
    (workspace / ".ptc-plus" / "config.toml").write_text(broken, encoding="utf-8")
    set_config_value(Scope.WORKSPACE, workspace, ("management", "budget_tokens"), 99, expected=1234)
    assert "budget_tokens = 99  # keep" in _text(workspace, Scope.WORKSPACE)


def test_a_choice_is_written_exactly_as_capabilities_set_writes_it(workspace: Path, tmp_path: Path) -> None:
    twin = tmp_path / "twin"
    (twin / ".ptc-plus").mkdir(parents=True)
    (twin / ".ptc-plus" / "config.toml").write_text(WORKSPACE, encoding="utf-8")
    set_capability(twin, "host:write_file", "off")
    key = ("capabilities", "host:write_file", "disclosure")
    set_config_value(Scope.WORKSPACE, workspace, key, "off", expected=None)
    assert _text(workspace, Scope.WORKSPACE) == (twin / ".ptc-plus" / "config.toml").read_text(encoding="utf-8")
    set_capability(twin, "host:write_file", "inherit")
    set_config_value(Scope.WORKSPACE, workspace, key, None, expected="off")  # inherit
    assert _text(workspace, Scope.WORKSPACE) == (twin / ".ptc-plus" / "config.toml").read_text(encoding="utf-8")


def test_removing_from_a_user_file_that_does_not_exist_creates_nothing(workspace: Path, tmp_path: Path) -> None:
    (tmp_path / "xdg" / "ptc-plus" / "config.toml").unlink()
    (tmp_path / "xdg" / "ptc-plus").rmdir()
    done = set_config_value(Scope.USER, workspace, ("statistics", "window"), None, expected=None)
    assert not done.changed
    assert not (tmp_path / "xdg" / "ptc-plus").exists()


def test_a_forced_init_of_the_user_file_waits_for_the_lock_its_editors_hold(workspace: Path) -> None:
    """``config init --user --force`` takes the user file's directory lock, as ``set_config_value`` does: an
    editor comparing and writing under the lock is never overwritten half-way by a forced init."""
    path = workspace.parent / "xdg" / "ptc-plus" / "config.toml"
    replaced = threading.Event()

    def forced_init() -> None:
        init_config(Scope.USER, force=True)
        replaced.set()

    with locked_user_file(path):  # an editor between its read and its write
        thread = threading.Thread(target=forced_init, daemon=True)
        thread.start()
        # A wait that can only make this test pass wrongly (a slow init), never fail a locking one.
        assert not replaced.wait(1.0), "config init replaced the user file while an editor held its lock"
        assert path.read_text(encoding="utf-8") == USER
    thread.join(120)
    assert replaced.is_set()
    assert path.read_text(encoding="utf-8") != USER  # the init went ahead once the lock was free
