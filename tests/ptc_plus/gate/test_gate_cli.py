"""``ptc-plus gate`` run as a real subprocess, in a clean environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ptc_plus.gate import rollout_bucket

EXECUTABLE = Path(sys.executable).with_name("ptc-plus")


def run(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PTC_")}
    clean |= {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "PTC_LOCALE": "en"}
    clean |= env
    return subprocess.run(
        [str(EXECUTABLE), "gate", *args],
        capture_output=True,
        text=True,
        env=clean,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )


def decision(tmp_path: Path, *args: str, **env: str) -> dict[str, object]:
    done = run(tmp_path, *args, "--json", **env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_json_shape_exactly(tmp_path: Path) -> None:
    done = run(tmp_path, "--user", "alice", "--json")
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        "{\n"
        '  "debug_run": false,\n'
        '  "enabled": true,\n'
        '  "reason": "no-debug-filter",\n'
        '  "stage": "debug",\n'
        '  "version": 1,\n'
        '  "warnings": []\n'
        "}\n"
    )


def test_kill_switch_beats_debug_title(tmp_path: Path) -> None:
    result = decision(tmp_path, "--user", "alice", "--title", "useptc", PTC_MODE="off", PTC_DEBUG="opt-in")
    assert result == {
        "version": 1,
        "enabled": False,
        "stage": "mode",
        "reason": "mode-off",
        "debug_run": True,
        "warnings": [],
    }


def test_toolsets_and_title_arguments(tmp_path: Path) -> None:
    blocked = decision(tmp_path, "--user", "u", "--toolsets", "files, web", PTC_TOOLSET_BLOCKLIST="web")
    assert (blocked["stage"], blocked["reason"]) == ("toolsets", "toolset-blocked")
    titled = decision(tmp_path, "--user", "u", "--title", "Check UsePtc", PTC_DEBUG="true")
    assert (titled["enabled"], titled["reason"]) == (True, "title-has-useptc")


def test_warnings_are_listed(tmp_path: Path) -> None:
    result = decision(tmp_path, "--user", "u", PTC_ROLLOUT_PERCENT="150")
    assert (result["enabled"], result["stage"]) == (False, "rollout")
    warnings = result["warnings"]
    assert isinstance(warnings, list) and len(warnings) == 1 and warnings[0].startswith("PTC-4102: ")


def test_reads_workspace_config_and_environment_wins(tmp_path: Path) -> None:
    workspace = tmp_path / "project"
    (workspace / ".ptc-plus").mkdir(parents=True)
    (workspace / ".ptc-plus" / "config.toml").write_text(
        '[gate]\nmode = "partial"\nuser_allowlist = ["bob"]\n', encoding="utf-8"
    )
    from_file = decision(tmp_path, "--user", "alice", "--workspace", str(workspace))
    assert from_file["reason"] == "user-not-allowlisted"
    overridden = decision(tmp_path, "--user", "alice", "--workspace", str(workspace), PTC_MODE="on")
    assert overridden["enabled"] is True


def test_rollout_matches_the_library(tmp_path: Path) -> None:
    users = [f"user-{n}" for n in range(4)]
    for user in users:
        result = decision(tmp_path, "--user", user, PTC_ROLLOUT_PERCENT="50", PTC_ROLLOUT_SALT="s1")
        assert result["enabled"] is (rollout_bucket(user, "s1") < 50)


def test_human_output_in_chinese(tmp_path: Path) -> None:
    done = run(tmp_path, "--user", "u", PTC_MODE="off", PTC_LOCALE="zh")
    assert done.returncode == 0
    assert "PTC 在阶段 mode 被禁用" in done.stdout


@pytest.mark.parametrize("args", [(), ("--user",)])
def test_usage_errors_exit_2(tmp_path: Path, args: tuple[str, ...]) -> None:
    done = run(tmp_path, *args)
    assert done.returncode == 2
    assert "PTC-1001" in done.stderr
