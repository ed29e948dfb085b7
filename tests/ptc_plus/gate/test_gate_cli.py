"""``ptc-plus gate`` through ``main`` in this process (the function the console script calls), in a clean environment.

Each invocation sees the clean environment plus only what it names, as a child started with that environment
would (ADR 0113; the console script itself runs in ``tests/ptc_plus/cli/test_no_traceback.py``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Protocol

import pytest

from ptc_plus.gate import rollout_bucket
from tests.cli_runner import CliRun, CliRunner
from tests.scaffolding import isolate_from_the_machine


class Gate(Protocol):
    def __call__(self, *args: str, **env: str) -> CliRun: ...


@pytest.fixture
def run(tmp_path: Path, run_cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> Gate:
    """``run(*args, **env)``: ``ptc-plus gate *args`` with ``env`` set for this one invocation."""
    isolate_from_the_machine(monkeypatch, tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PTC_LOCALE", "en")
    monkeypatch.chdir(tmp_path)

    def invoke(*args: str, **env: str) -> CliRun:
        with monkeypatch.context() as scoped:
            for key, value in env.items():
                scoped.setenv(key, value)
            return run_cli("gate", *args)

    return invoke


def decision(run: Gate, *args: str, **env: str) -> dict[str, object]:
    done = run(*args, "--json", **env)
    assert done.code == 0, done.err
    return json.loads(done.out)  # type: ignore[no-any-return]


def test_json_shape_exactly(run: Gate) -> None:
    done = run("--user", "alice", "--json")
    assert done.code == 0, done.err
    assert done.out == (
        "{\n"
        '  "debug_run": false,\n'
        '  "enabled": true,\n'
        '  "reason": "no-debug-filter",\n'
        '  "stage": "debug",\n'
        '  "version": 1,\n'
        '  "warnings": []\n'
        "}\n"
    )


def test_kill_switch_beats_debug_title(run: Gate) -> None:
    result = decision(run, "--user", "alice", "--title", "useptc", PTC_MODE="off", PTC_DEBUG="opt-in")
    assert result == {
        "version": 1,
        "enabled": False,
        "stage": "mode",
        "reason": "mode-off",
        "debug_run": True,
        "warnings": [],
    }


def test_toolsets_and_title_arguments(run: Gate) -> None:
    blocked = decision(run, "--user", "u", "--toolsets", "files, web", PTC_TOOLSET_BLOCKLIST="web")
    assert (blocked["stage"], blocked["reason"]) == ("toolsets", "toolset-blocked")
    titled = decision(run, "--user", "u", "--title", "Check UsePtc", PTC_DEBUG="true")
    assert (titled["enabled"], titled["reason"]) == (True, "title-has-useptc")


def test_warnings_are_listed(run: Gate) -> None:
    result = decision(run, "--user", "u", PTC_ROLLOUT_PERCENT="150")
    assert (result["enabled"], result["stage"]) == (False, "rollout")
    warnings = result["warnings"]
    assert isinstance(warnings, list) and len(warnings) == 1 and warnings[0].startswith("PTC-4102: ")


def test_reads_workspace_config_and_environment_wins(run: Gate, tmp_path: Path) -> None:
    workspace = tmp_path / "project"
    (workspace / ".ptc-plus").mkdir(parents=True)
    (workspace / ".ptc-plus" / "config.toml").write_text(
        '[gate]\nmode = "partial"\nuser_allowlist = ["bob"]\n', encoding="utf-8"
    )
    from_file = decision(run, "--user", "alice", "--workspace", str(workspace))
    assert from_file["reason"] == "user-not-allowlisted"
    overridden = decision(run, "--user", "alice", "--workspace", str(workspace), PTC_MODE="on")
    assert overridden["enabled"] is True


def test_an_invocation_sees_only_its_own_environment(run: Gate) -> None:
    # What one invocation set is gone for the next, as between two processes.
    assert decision(run, "--user", "alice", PTC_MODE="off")["enabled"] is False
    assert decision(run, "--user", "alice")["enabled"] is True


def test_rollout_matches_the_library(run: Gate) -> None:
    users = [f"user-{n}" for n in range(4)]
    for user in users:
        result = decision(run, "--user", user, PTC_ROLLOUT_PERCENT="50", PTC_ROLLOUT_SALT="s1")
        assert result["enabled"] is (rollout_bucket(user, "s1") < 50)


def test_human_output_in_chinese(run: Gate) -> None:
    done = run("--user", "u", PTC_MODE="off", PTC_LOCALE="zh")
    assert done.code == 0
    assert "PTC 在阶段 mode 被禁用" in done.out


@pytest.mark.parametrize("args", [(), ("--user",)])
def test_usage_errors_exit_2(run: Gate, args: tuple[str, ...]) -> None:
    done = run(*args)
    assert done.code == 2
    assert "PTC-1001" in done.err
