"""``config show`` at library level: the value in force for every key and which file it came from."""

from __future__ import annotations

from ptc_plus.config.effective import CONFIG_PROBLEM, DEFAULT
from ptc_plus.config.keys import config_keys
from ptc_plus.config.report import inspect_config
from tests.ptc_plus.config.conftest import ConfigFiles


def test_every_key_with_its_value_and_source(files: ConfigFiles) -> None:
    files.write(
        user='[runtime]\ntimeout_s = 30\npolicy = "danger-full-access"\n[management]\nbaseline = ["host:a"]\n',
        workspace='[runtime]\ntimeout_s = 10\n[capabilities."mcp:git/log"]\ndisclosure = "off"\n',
    )
    report = inspect_config(files.workspace, user_file=files.user_file)
    shown = {key.key: (key.value, key.source, key.file) for key in report.keys}
    assert shown["runtime.timeout_s"] == (10, "workspace", str(files.workspace_file))
    assert shown["runtime.policy"] == ("danger-full-access", "user", str(files.user_file))
    assert shown["management.baseline"] == (["host:a"], "user", str(files.user_file))
    assert shown['capabilities."mcp:git/log".disclosure'] == ("off", "workspace", str(files.workspace_file))
    assert shown["runtime.memory_bytes"] == (512 * 1024 * 1024, DEFAULT, None)
    assert shown["gate.mode"] == (None, DEFAULT, None)
    fixed = {key.path for key in config_keys() if not key.templated}
    assert fixed <= set(shown)
    assert [(f.scope.value, f.exists) for f in report.files] == [("user", True), ("workspace", True)]


def test_the_version_comes_from_the_file_that_writes_it(files: ConfigFiles) -> None:
    files.write(user="version = 1\n", workspace="[runtime]\nnetwork = false\n")
    shown = {key.key: key for key in inspect_config(files.workspace, user_file=files.user_file).keys}
    assert (shown["version"].value, shown["version"].source, shown["version"].file) == (1, "user", str(files.user_file))
    files.write(workspace="version = 1\n")
    shown = {key.key: key for key in inspect_config(files.workspace, user_file=files.user_file).keys}
    assert (shown["version"].source, shown["version"].file) == ("workspace", str(files.workspace_file))
    files.user_file.unlink()
    files.workspace_file.unlink()
    shown = {key.key: key for key in inspect_config(files.workspace, user_file=files.user_file).keys}
    assert (shown["version"].value, shown["version"].source, shown["version"].file) == (1, DEFAULT, None)


def test_a_statistics_problem_is_shown_as_the_reason_they_are_off(files: ConfigFiles) -> None:
    files.write(user="[statistics]\nwindow = 0\n")
    report = inspect_config(files.workspace, user_file=files.user_file)
    enabled = next(key for key in report.keys if key.key == "statistics.enabled")
    assert (enabled.value, enabled.source) == (False, CONFIG_PROBLEM)
    assert len(report.problems) == 1


def test_show_json_and_lines(files: ConfigFiles) -> None:
    files.write(workspace="[runtime]\nnetwork = false\n")
    report = inspect_config(files.workspace, user_file=files.user_file)
    document = report.show_json("en")
    assert set(document) == {"files", "keys", "problems"}
    assert {"key": "runtime.network", "value": False, "source": "workspace", "file": str(files.workspace_file)} in (
        document["keys"]
    )
    lines = report.show_lines("en")
    assert lines[0] == f"user file: {files.user_file} (not present)"
    assert "runtime.network = false  # workspace file" in lines
    assert "gate.mode = (not set)  # default" in lines
    assert any(line.startswith("runtime.presentation = ") for line in report.show_lines("zh"))
