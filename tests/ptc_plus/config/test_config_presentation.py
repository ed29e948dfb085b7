"""``[runtime] presentation``: ``ptc`` (default), ``both`` or ``native`` — per key, workspace over user, validated."""

from __future__ import annotations

from ptc_plus.config import Presentation, RuntimeSection

from .conftest import ConfigFiles


def test_the_default_is_ptc(files: ConfigFiles) -> None:
    loaded = files.load()
    assert loaded.config.runtime.presentation is Presentation.PTC is RuntimeSection().presentation
    assert loaded.issues == ()


def test_each_presentation_can_be_chosen(files: ConfigFiles) -> None:
    for value in ("ptc", "both", "native"):
        files.write(user=f'[runtime]\npresentation = "{value}"\n')
        loaded = files.load()
        assert loaded.config.runtime.presentation is Presentation(value)
        assert loaded.origins["runtime.presentation"] == str(files.user_file)
        assert loaded.issues == ()


def test_the_workspace_file_wins_per_key(files: ConfigFiles) -> None:
    # Presentation is not a sandbox key: a workspace may choose it either way (no tighten-only rule).
    files.write(
        user='[runtime]\npresentation = "native"\ntimeout_s = 30\n', workspace='[runtime]\npresentation = "both"\n'
    )
    loaded = files.load()
    assert loaded.config.runtime.presentation is Presentation.BOTH
    assert loaded.config.runtime.timeout_s == 30  # the user file's other runtime keys still count
    assert loaded.origins["runtime.presentation"] == str(files.workspace_file)
    assert loaded.issues == ()


def test_an_invalid_presentation_names_file_and_key_in_both_locales(files: ConfigFiles) -> None:
    files.write(
        user='[runtime]\npresentation = "both"\n', workspace='[runtime]\npresentation = "hybrid"\ntimeout_s = 30\n'
    )
    loaded = files.load()
    (issue,) = loaded.issues
    assert (issue.file, issue.path, issue.code) == (str(files.workspace_file), "runtime.presentation", "PTC-4010")
    english, chinese = issue.message("en"), issue.message("zh")
    assert english.startswith(f"{files.workspace_file}:2:1: runtime.presentation: ") and "ptc, both, native" in english
    assert chinese.startswith(f"{files.workspace_file}:2:1：runtime.presentation：") and "之一" in chinese
    # The bad key is dropped: the user file's choice and the workspace's valid keys still count.
    assert loaded.config.runtime.presentation is Presentation.BOTH
    assert loaded.config.runtime.timeout_s == 30


def test_the_presentation_is_part_of_the_config_revision(files: ConfigFiles) -> None:
    before = files.load().revision
    files.write(workspace='[runtime]\npresentation = "native"\n')
    assert files.load().revision != before
