"""Loading: defaults, workspace wins per key, errors with file and key path in both locales."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ptc_plus.config import CONFIG_VERSION, Disclosure, PtcConfig, SandboxPolicy, user_config_file, validate
from ptc_plus.config.errors import (
    ConfigError,
    ConfigInvalid,
    ConfigSyntaxError,
    ConfigUnreadable,
    ConfigVersionUnsupported,
)
from ptc_plus.migration import Migrations

from .conftest import ConfigFiles


def test_no_files_gives_defaults_with_management_on(files: ConfigFiles) -> None:
    loaded = files.load()
    assert loaded.config == PtcConfig()
    assert loaded.config.management.enabled is True  # ADR 0080
    assert loaded.issues == () and loaded.files == ()
    loaded.raise_if_invalid()


def test_workspace_wins_per_key(files: ConfigFiles) -> None:
    files.write(
        user='[management]\nenabled = true\nbudget_tokens = 1000\n[capabilities."host:a"]\ndisclosure = "off"\n'
        "[statistics]\nwindow = 40\n",
        workspace='[management]\nbudget_tokens = 500\n[capabilities."host:b"]\ndisclosure = "full"\n'
        '[capabilities."host:a"]\ndisclosure = "on-demand"\n',
    )
    loaded = files.load()
    config = loaded.config
    assert config.management.enabled is True  # only the user file sets it
    assert config.management.budget_tokens == 500  # the workspace overrides it
    assert config.statistics.window == 40
    assert config.disclosure_of("host:a") is Disclosure.ON_DEMAND
    assert config.disclosure_of("host:b") is Disclosure.FULL
    assert config.disclosure_of("host:c") is None
    assert loaded.origins["management.enabled"] == str(files.user_file)
    assert loaded.origins["management.budget_tokens"] == str(files.workspace_file)
    assert loaded.origins['capabilities."host:a".disclosure'] == str(files.workspace_file)
    assert loaded.files == (str(files.user_file), str(files.workspace_file))


@pytest.mark.parametrize(
    ("toml", "path", "en", "zh"),
    [
        ('[statistics]\nwindow = "ten"\n', "statistics.window", "expected an integer", "应为整数"),
        ("[management]\nenabled = 1\n", "management.enabled", "expected a boolean", "应为布尔值"),
        ('[management]\nbaseline = ["a", 2]\n', "management.baseline[1]", "expected a string", "应为字符串"),
        (
            '[capabilities."mcp:git/log"]\ndisclosure = "shown"\n',
            'capabilities."mcp:git/log".disclosure',
            "one of",
            "之一",
        ),
        (
            '[capabilities."host:x"]\ndisclosure = "off"\nmode = "full"\n',
            'capabilities."host:x".mode',
            "unknown key",
            "未知的键",
        ),
        ("[runtime]\ntimeout_s = 9000\n", "runtime.timeout_s", "deployment cap 600", "部署上限 600"),
        ("[runtime]\nmax_pending_calls = 0\n", "runtime.max_pending_calls", "greater than 0", "大于 0"),
        ('[runtime]\npolicy = "yolo"\n', "runtime.policy", "workspace-write", "workspace-write"),
        ("[statistics]\nthreshold = 1.5\n", "statistics.threshold", "between 0 and 1", "0 与 1 之间"),
        ("[runtime]\ntimeout_s = nan\n", "runtime.timeout_s", "finite number", "有限数值"),
        ("[runtime]\ntermination_grace_s = inf\n", "runtime.termination_grace_s", "finite number", "有限数值"),
        ("[statistics]\nthreshold = -nan\n", "statistics.threshold", "finite number", "有限数值"),
        ("[management]\ncontext_tokens = 0\n", "management.context_tokens", "at least 1", "至少"),
        ("[extras]\nx = 1\n", "extras", "unknown key", "未知的键"),
        ("management = 3\n", "management", "expected a table", "应为表"),
    ],
)
def test_errors_name_file_key_path_and_reason_in_both_locales(
    files: ConfigFiles, toml: str, path: str, en: str, zh: str
) -> None:
    files.write(workspace=toml)
    (issue,) = files.load().issues
    assert (issue.file, issue.path, issue.code) == (str(files.workspace_file), path, "PTC-4010")
    english, chinese = issue.message("en"), issue.message("zh")
    where = f"{files.workspace_file}:{issue.line}:{issue.column}"
    assert issue.line is not None and issue.column is not None
    assert english.startswith(f"{where}: {path}: ") and en in english
    assert chinese.startswith(f"{where}：{path}：") and zh in chinese


def test_syntax_error_is_reported_with_the_file_in_both_locales(files: ConfigFiles) -> None:
    files.write(user="[management\nenabled = true\n", workspace='[capabilities."host:a"]\ndisclosure = "off"\n')
    loaded = files.load()
    (issue,) = loaded.issues
    assert issue.code == "PTC-4002" and issue.file == str(files.user_file)
    assert str(files.user_file) in issue.message("en") and "TOML" in issue.message("en")
    assert str(files.user_file) in issue.message("zh") and "有效的 TOML" in issue.message("zh")
    # the other file still counts
    assert loaded.config.disclosure_of("host:a") is Disclosure.OFF


def test_newer_format_version_is_refused_whole(files: ConfigFiles) -> None:
    files.write(workspace="version = 2\n[management]\nenabled = false\n")
    loaded = files.load()
    assert [i.code for i in loaded.issues] == ["PTC-4003"]
    assert loaded.config.management.enabled is True  # the file's non-default value did not count
    assert "2" in loaded.issues[0].message("zh")


def test_one_bad_key_keeps_its_valid_neighbours(files: ConfigFiles) -> None:
    files.write(
        workspace='[management]\nenabled = true\nbudget_tokens = "many"\n[runtime]\npolicy = "read-only"\nbogus = 1\n'
    )
    loaded = files.load()
    assert loaded.config.management.enabled is True
    assert loaded.config.management.budget_tokens == PtcConfig().management.budget_tokens
    assert loaded.config.runtime.policy is SandboxPolicy.READ_ONLY
    assert sorted(i.path for i in loaded.issues) == ["management.budget_tokens", "runtime.bogus"]


def test_duplicate_baseline_entries_are_reported_and_kept_once(files: ConfigFiles) -> None:
    files.write(workspace='[management]\nbaseline = ["host:a", "host:b", "host:a"]\n')
    loaded = files.load()
    assert loaded.config.management.baseline == ("host:a", "host:b")
    assert [i.path for i in loaded.issues] == ["management.baseline[2]"]


def test_invalid_statistics_disable_only_statistics(files: ConfigFiles) -> None:
    files.write(
        workspace='[management]\nenabled = true\nbudget_tokens = 1200\nbaseline = ["host:a"]\n'
        '[capabilities."host:x"]\ndisclosure = "off"\n[capabilities."host:y"]\ndisclosure = "full"\n'
        "[statistics]\nenabled = true\nthreshold = 7\n"
    )
    loaded = files.load()
    assert loaded.statistics_disabled is True
    assert loaded.config.statistics.enabled is False
    assert [i.path for i in loaded.issues] == ["statistics.threshold"]
    # manual choices keep working
    assert loaded.config.management.enabled is True
    assert loaded.config.management.budget_tokens == 1200
    assert loaded.config.management.baseline == ("host:a",)
    assert loaded.config.disclosure_of("host:x") is Disclosure.OFF
    assert loaded.config.disclosure_of("host:y") is Disclosure.FULL


def test_min_samples_above_window_disables_statistics_naming_the_file(files: ConfigFiles) -> None:
    files.write(user="[statistics]\nwindow = 4\n", workspace="[statistics]\nmin_samples = 9\n")
    loaded = files.load()
    assert loaded.config.statistics.enabled is False
    (issue,) = loaded.issues
    assert (issue.file, issue.path) == (str(files.workspace_file), "statistics.min_samples")
    assert "9" in issue.message("zh") and "4" in issue.message("zh")


def test_bad_user_statistics_key_overridden_by_workspace_does_not_disable(files: ConfigFiles) -> None:
    files.write(user="[statistics]\nthreshold = 3\n", workspace="[statistics]\nthreshold = 0.5\n")
    loaded = files.load()
    assert [i.file for i in loaded.issues] == [str(files.user_file)]  # still reported
    assert loaded.statistics_disabled is False
    assert loaded.config.statistics.threshold == 0.5


@pytest.mark.parametrize(
    ("user", "workspace", "kind"),
    [
        ("[management\n", None, ConfigSyntaxError),
        ("version = 9\n", None, ConfigVersionUnsupported),
        (None, None, ConfigUnreadable),
    ],
)
def test_file_problems_are_raised_as_their_own_errors(
    files: ConfigFiles, user: str | None, workspace: str | None, kind: type[ConfigError]
) -> None:
    files.write(user=user, workspace=workspace)
    if user is None:  # a directory where the file should be: it exists but cannot be read
        files.user_file.mkdir(parents=True)
    loaded = files.load()
    (issue,) = loaded.issues
    assert issue.code == kind.code and isinstance(issue.to_error(), kind)
    with pytest.raises(ConfigInvalid) as caught:
        loaded.raise_if_invalid()
    assert isinstance(caught.value.__cause__, kind)


def test_strict_load_raises(files: ConfigFiles) -> None:
    files.write(workspace="[statistics]\nwindow = 0\n")
    with pytest.raises(ConfigInvalid) as caught:
        files.load().raise_if_invalid()
    assert caught.value.code == "PTC-4011"
    assert "statistics.window" in caught.value.message("zh")


def test_user_config_file_location(tmp_path: Path) -> None:
    assert user_config_file({"XDG_CONFIG_HOME": str(tmp_path)}) == tmp_path / "ptc-plus" / "config.toml"
    home = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": "relative/ignored"}
    assert user_config_file(home) == tmp_path / ".config" / "ptc-plus" / "config.toml"


def test_capability_entry_with_an_unknown_key_keeps_its_disclosure(files: ConfigFiles) -> None:
    files.write(
        workspace='[capabilities."host:x"]\ndisclosure = "off"\nmode = "full"\n[capabilities."host:y"]\nmode = 1\n'
    )
    loaded = files.load()
    assert loaded.config.disclosure_of("host:x") is Disclosure.OFF
    assert "host:y" not in loaded.config.capabilities
    assert {i.path for i in loaded.issues} == {
        'capabilities."host:x".mode',
        'capabilities."host:y".mode',
        'capabilities."host:y".disclosure',
    }


@pytest.mark.parametrize("value", ["true", '"1"', "1.0"])
def test_version_must_be_an_integer(files: ConfigFiles, value: str) -> None:
    files.write(workspace=f"version = {value}\n[management]\nenabled = true\n")
    loaded = files.load()
    assert [(i.path, i.reason) for i in loaded.issues] == [("version", "type")]
    assert loaded.config.management.enabled is True


def _management_renamed(data: dict[str, Any]) -> dict[str, Any]:
    """A fake version 0 (no release wrote one) whose ``[management]`` table was called ``[manage]``."""
    if "manage" in data:
        data["management"] = data.pop("manage")
    return data


def _failing_step(data: dict[str, Any]) -> dict[str, Any]:
    raise KeyError("manage")


def test_a_registered_older_version_migrates_in_memory_on_load(
    files: ConfigFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(validate, "MIGRATIONS", Migrations(current=CONFIG_VERSION, steps={0: _management_renamed}))
    text = "version = 0\n[manage]\nenabled = true\nbudget_tokens = 300\n"
    files.write(workspace=text)
    loaded = files.load()
    assert loaded.issues == ()
    assert loaded.config.management.enabled is True and loaded.config.management.budget_tokens == 300
    assert files.workspace_file.read_text() == text  # a migration never rewrites the file


def test_an_older_version_without_a_step_is_refused_whole(files: ConfigFiles) -> None:
    files.write(workspace="version = 0\n[management]\nenabled = false\n")
    loaded = files.load()
    assert [i.code for i in loaded.issues] == ["PTC-4003"]
    assert loaded.config.management.enabled is True  # the file's non-default value did not count


def test_an_older_file_its_step_cannot_migrate_is_refused_whole(
    files: ConfigFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(validate, "MIGRATIONS", Migrations(current=CONFIG_VERSION, steps={0: _failing_step}))
    files.write(workspace="version = 0\n[management]\nenabled = true\n")
    assert [i.code for i in files.load().issues] == ["PTC-4003"]


def test_a_newer_version_stays_refused_with_older_ones_known(
    files: ConfigFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(validate, "MIGRATIONS", Migrations(current=CONFIG_VERSION, steps={0: _management_renamed}))
    files.write(user="version = 9\n")
    (issue,) = files.load().issues
    assert issue.code == "PTC-4003"
    assert "config format version 9 is not supported" in issue.message("en")


def test_every_released_config_version_has_its_chain() -> None:
    """Raising ``CONFIG_VERSION`` without a step from the old one fails here."""
    assert validate.MIGRATIONS.current == CONFIG_VERSION
    assert all(validate.MIGRATIONS.reads(v) for v in range(1, CONFIG_VERSION + 1))
