"""``config check`` at library level: every problem with file, line, key path and reason; exit 1 on any."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ptc_plus.cli.workspace_plan import new_session_plan
from ptc_plus.config import set_capability
from ptc_plus.config.errors import ConfigSyntaxError, ConfigUnreadable
from ptc_plus.config.report import ConfigReport, inspect_config
from ptc_plus.session.report import plan_lines
from tests.cli_runner import CliRunner
from tests.privileges import dac_override_dropped
from tests.ptc_plus.config.conftest import ConfigFiles


def check(files: ConfigFiles) -> ConfigReport:
    return inspect_config(files.workspace, user_file=files.user_file)


def test_clean_files_exit_0(files: ConfigFiles) -> None:
    files.write(user="version = 1\n[runtime]\ntimeout_s = 30\n", workspace='[runtime]\npolicy = "read-only"\n')
    report = check(files)
    assert (report.exit_code, report.problems) == (0, ())
    assert report.check_json()["ok"] is True


def test_no_files_at_all_is_clean(files: ConfigFiles) -> None:
    files.workspace.mkdir()
    assert check(files).exit_code == 0


def test_bad_toml_exits_1_with_line_and_column(files: ConfigFiles) -> None:
    files.write(workspace="version = 1\n[runtime\ntimeout_s = 3\n")
    report = check(files)
    (problem,) = report.problems
    assert report.exit_code == 1
    assert (problem.code, problem.line, problem.column) == ("PTC-4002", 2, 9)
    assert problem.message("en") == (
        f"{files.workspace_file}:2:9: not valid TOML: Expected ']' at the end of a table declaration"
    )


def test_unknown_key_says_did_you_mean_and_where(files: ConfigFiles) -> None:
    files.write(workspace="version = 1\n\n[runtime]\ntimout_s = 3\n")
    (problem,) = check(files).problems
    assert (problem.path, problem.reason, problem.line, problem.column) == ("runtime.timout_s", "unknown-key", 4, 1)
    assert (
        problem.message("en") == f"{files.workspace_file}:4:1: runtime.timout_s: unknown key; did you mean 'timeout_s'?"
    )
    assert "timeout_s" in problem.message("zh")
    assert check(files).exit_code == 1


@pytest.mark.parametrize(
    ("toml", "path", "suggestion"),
    [
        ("[statistcs]\nwindow = 3\n", "statistcs", "statistics"),
        ("[gate]\nmdoe = 'on'\n", "gate.mdoe", "mode"),
        ('[capabilities."host:a"]\ndisclousre = "off"\n', 'capabilities."host:a".disclousre', "disclosure"),
        ("[management]\nbudget = 3\n", "management.budget", "budget_tokens"),
    ],
)
def test_unknown_sections_and_keys_suggest_the_closest_name(
    files: ConfigFiles, toml: str, path: str, suggestion: str
) -> None:
    files.write(user=toml)
    (problem,) = [p for p in check(files).problems if p.reason == "unknown-key"]
    assert (problem.path, problem.params.get("suggestion")) == (path, suggestion)
    assert problem.line is not None


def test_an_unknown_key_far_from_any_name_gets_no_suggestion(files: ConfigFiles) -> None:
    files.write(user="[runtime]\nxyzzy = 1\n")
    (problem,) = check(files).problems
    assert "suggestion" not in problem.params and problem.message("en").endswith("runtime.xyzzy: unknown key")


def test_wrong_type_exits_1_at_the_keys_line(files: ConfigFiles) -> None:
    files.write(user='# mine\n[statistics]\nenabled = true\nwindow = "ten"\n')
    report = check(files)
    (problem,) = report.problems
    assert report.exit_code == 1
    assert (problem.path, problem.reason, problem.line) == ("statistics.window", "type", 4)
    assert problem.message("en").startswith(f"{files.user_file}:4:1: statistics.window: expected an integer")


def test_future_version_exits_1(files: ConfigFiles) -> None:
    files.write(workspace="# written by a newer ptc-plus\nversion = 2\n")
    report = check(files)
    (problem,) = report.problems
    assert (report.exit_code, problem.code, problem.line) == (1, "PTC-4003", 2)
    assert "version 2 is not supported" in problem.message("en")


def test_a_loosening_workspace_key_is_a_problem(files: ConfigFiles) -> None:
    files.write(workspace="[runtime]\nnetwork = true\n")
    (problem,) = check(files).problems
    assert (problem.reason, problem.line) == ("loosening", 2)


def test_every_problem_of_both_files_is_listed(files: ConfigFiles) -> None:
    files.write(user="[runtime]\ntimeout_s = -1\n[bogus]\n", workspace="[management]\nenabled = 1\n")
    report = check(files)
    assert {(Path(p.file).name, p.path) for p in report.problems} == {
        ("config.toml", "runtime.timeout_s"),
        ("config.toml", "bogus"),
        ("config.toml", "management.enabled"),
    }
    assert len(report.problems) == 3 and report.check_lines("en")[-1] == "3 problems found."


def test_a_key_inside_an_inline_table_is_placed_on_its_line(files: ConfigFiles) -> None:
    files.write(user='version = 1\n[capabilities]\n"host:a" = { disclosure = "shown" }\n')
    (problem,) = check(files).problems
    assert (problem.path, problem.line) == ('capabilities."host:a".disclosure', 3)


def test_an_array_item_is_placed_on_its_arrays_line(files: ConfigFiles) -> None:
    files.write(user='[management]\nbaseline = [\n  "a",\n  2,\n]\n')
    (problem,) = check(files).problems
    assert (problem.path, problem.line) == ("management.baseline[1]", 2)


def test_check_json_is_one_object_with_located_problems(files: ConfigFiles) -> None:
    files.write(workspace="[runtime]\ntimout_s = 3\n")
    document = check(files).check_json("en")
    assert document["ok"] is False
    assert [f["scope"] for f in document["files"]] == ["user", "workspace"]
    (problem,) = document["problems"]
    assert problem == {
        "code": "PTC-4010",
        "file": str(files.workspace_file),
        "line": 2,
        "column": 1,
        "path": "runtime.timout_s",
        "reason": "unknown-key",
        "message": f"{files.workspace_file}:2:1: runtime.timout_s: unknown key; did you mean 'timeout_s'?",
    }


# -- unreadable files: a clear typed problem, never a traceback ------------------------------------------------------


def test_a_directory_where_the_file_should_be(files: ConfigFiles) -> None:
    files.user_file.mkdir(parents=True)
    (problem,) = check(files).problems
    assert problem.code == ConfigUnreadable.code
    assert (
        problem.message("en")
        == f"Cannot read config file {files.user_file}: it is not a regular file (a directory, FIFO or device is there)"
    )
    assert "普通文件" in problem.message("zh")


def test_a_fifo_where_the_file_should_be_does_not_hang(files: ConfigFiles) -> None:
    files.user_file.parent.mkdir(parents=True)
    os.mkfifo(files.user_file)
    (problem,) = check(files).problems
    assert problem.reason == "unreadable.not-a-file"


def test_non_utf8_bytes_name_the_line_and_byte(files: ConfigFiles) -> None:
    files.user_file.parent.mkdir(parents=True)
    files.user_file.write_bytes(b"version = 1\n# caf\xe9\n")
    (problem,) = check(files).problems
    assert (problem.code, problem.line) == (ConfigUnreadable.code, 2)
    assert problem.message("en").endswith("it is not UTF-8 text (byte 0xe9); save it as UTF-8")
    assert isinstance(problem.to_error(), ConfigUnreadable)


def test_permission_denied(tmp_path: Path, run_cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    # The real open failing: in a thread without root's right to ignore file modes (CI runs as root).
    user_file = tmp_path / "xdg" / "ptc-plus" / "config.toml"
    user_file.parent.mkdir(parents=True)
    user_file.write_text("version = 1\n", encoding="utf-8")
    user_file.chmod(0)
    monkeypatch.setenv("PTC_LOCALE", "en")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    with dac_override_dropped():
        done = run_cli("config", "check", "--json", "--workspace", str(tmp_path))
    (problem,) = done.json()["problems"]
    assert done.code == 1 and problem["file"] == str(user_file)
    assert problem["message"].endswith(": permission denied"), problem


def test_permission_denied_wording(files: ConfigFiles) -> None:
    # Also as root (who reads any file): the error a non-root user gets is worded plainly.
    from ptc_plus.config.source import os_problem

    problem = os_problem("/x/config.toml", PermissionError(13, "Permission denied"))
    assert problem.message("en") == "Cannot read config file /x/config.toml: permission denied"


# -- one parser's wording, whichever command meets the file ----------------------------------------------------------


@pytest.mark.parametrize("text", ["[capabilities\nbroken", 'version = 1\nx = "unterminated\n', "a = 1\na = 2\n"])
def test_the_editor_and_the_loader_say_the_same_about_bad_toml(files: ConfigFiles, text: str) -> None:
    files.write(workspace=text)
    (problem,) = check(files).problems
    with pytest.raises(ConfigSyntaxError) as caught:
        set_capability(files.workspace, "host:a", "full")
    for lang in ("en", "zh"):
        assert caught.value.message(lang) == problem.message(lang)
    assert files.workspace_file.read_text(encoding="utf-8") == text


def test_the_editor_reports_a_non_utf8_file_as_the_loader_does(files: ConfigFiles) -> None:
    files.workspace_file.parent.mkdir(parents=True)
    files.workspace_file.write_bytes(b"\xff\xfe")
    (problem,) = check(files).problems
    with pytest.raises(ConfigUnreadable) as caught:
        set_capability(files.workspace, "host:a", "full")
    assert caught.value.message("en") == problem.message("en")


# -- a misleading reason is never shown --------------------------------------------------------------------------------


def test_a_syntax_error_is_not_reported_as_statistics_disabled_by_the_config(files: ConfigFiles) -> None:
    files.write(workspace="version = 1\n[statistics\nenabled = true\n")
    plan = new_session_plan(files.workspace).plan
    assert plan.statistics == "invalid"
    summary = plan_lines(plan, "tokens", "en")[0]
    assert "disabled by the config" not in summary and "config problems" in summary


def test_statistics_switched_off_in_the_file_still_say_so(files: ConfigFiles) -> None:
    files.write(workspace="[statistics]\nenabled = false\n")
    plan = new_session_plan(files.workspace).plan
    assert plan.statistics == "disabled" and "disabled by the config" in plan_lines(plan, "tokens", "en")[0]
