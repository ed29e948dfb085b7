"""``ptc-plus exec`` runs under the config a session in the workspace would get (issue 10 item 2, ADR 0064).

The user and workspace files' ``[runtime]`` settings apply, a workspace file
only tightening the sandbox (ADR 0045); ``--policy`` may only tighten a
policy a config file sets; config problems are reported and the valid keys
still apply.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_runner import CliRunner

WRITE = "open('written.txt', 'w').write('x')\nreturn 'wrote'\n"


@pytest.fixture
def user_config(tmp_path: Path) -> Path:
    """The user config file (not created) under the scratch ``XDG_CONFIG_HOME`` conftest.py sets."""
    return tmp_path / "xdg" / "ptc-plus" / "config.toml"


def _configure(file: Path, text: str) -> None:
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text, encoding="utf-8")


def _workspace_config(workspace: Path, text: str) -> None:
    _configure(workspace / ".ptc-plus" / "config.toml", text)


@pytest.mark.needs_bwrap
def test_a_read_only_workspace_policy_stops_a_write(workspace: Path, run_cli: CliRunner) -> None:
    _workspace_config(workspace, '[runtime]\npolicy = "read-only"\n')
    done = run_cli("exec", "--workspace", str(workspace), "--json", stdin=WRITE)
    assert done.code == 1, done.out
    shape = done.json()
    assert shape["error"]["kind"] == "exception" and "Read-only file system" in shape["error"]["message"]
    assert not (workspace / "written.txt").exists()


def test_a_configured_timeout_stops_a_longer_program(workspace: Path, run_cli: CliRunner) -> None:
    # --policy danger-full-access (no file sets a policy to bound it), so this runs where bubblewrap is missing too.
    _workspace_config(workspace, "[runtime]\ntimeout_s = 2\n")
    done = run_cli(
        "exec", "--workspace", str(workspace), "--policy", "danger-full-access", "--json",
        stdin="import time\ntime.sleep(4)\nreturn 'slept'\n",
    )  # fmt: skip
    assert done.code == 1, done.out
    shape = done.json()
    assert shape["error"]["kind"] == "timeout" and "2 s" in shape["error"]["message"]


@pytest.mark.needs_bwrap
def test_the_user_files_policy_applies_and_a_workspace_file_cannot_loosen_it(
    workspace: Path, user_config: Path, run_cli: CliRunner
) -> None:
    _configure(user_config, '[runtime]\npolicy = "read-only"\n')
    _workspace_config(workspace, '[runtime]\npolicy = "danger-full-access"\n')
    done = run_cli("exec", "--workspace", str(workspace), "--json", stdin=WRITE)
    assert done.code == 1 and done.json()["error"]["kind"] == "exception"
    assert not (workspace / "written.txt").exists()
    assert "runtime.policy" in done.err  # the refused loosening is reported, as a session reports it


def test_a_flag_looser_than_a_files_policy_is_a_usage_error(workspace: Path, run_cli: CliRunner) -> None:
    _workspace_config(workspace, '[runtime]\npolicy = "read-only"\n')
    for looser in ("workspace-write", "danger-full-access"):
        done = run_cli("exec", "--workspace", str(workspace), "--policy", looser, stdin=WRITE)
        assert done.code == 2
        assert "PTC-4030" in done.err and str(workspace / ".ptc-plus" / "config.toml") in done.err
        assert "Traceback" not in done.err
        assert not (workspace / "written.txt").exists()  # nothing ran


@pytest.mark.needs_bwrap
def test_a_flag_may_tighten(workspace: Path, user_config: Path, run_cli: CliRunner) -> None:
    _configure(user_config, '[runtime]\npolicy = "workspace-write"\n')
    done = run_cli("exec", "--workspace", str(workspace), "--policy", "read-only", "--json", stdin=WRITE)
    assert done.code == 1 and done.json()["error"]["kind"] == "exception"
    assert not (workspace / "written.txt").exists()


def test_without_a_configured_policy_the_flag_chooses(workspace: Path, run_cli: CliRunner) -> None:
    """The built-in default is no ceiling: ``--policy danger-full-access`` stays the way to run without
    bubblewrap, at the user's own risk."""
    done = run_cli("exec", "--workspace", str(workspace), "--policy", "danger-full-access", "--json", stdin=WRITE)
    assert done.code == 0 and done.json()["value"] == "wrote"


def test_config_problems_are_reported_and_the_valid_keys_still_apply(workspace: Path, run_cli: CliRunner) -> None:
    _workspace_config(workspace, '[runtime]\ntimeout_s = 2\nmemory_bytes = "lots"\nbogus = 1\n')
    done = run_cli(
        "exec", "--workspace", str(workspace), "--policy", "danger-full-access", "--json",
        stdin="import time\ntime.sleep(4)\n",
    )  # fmt: skip
    assert done.code == 1 and done.json()["error"]["kind"] == "timeout"
    problems = [line for line in done.err.splitlines() if line.startswith("config problem PTC-4010: ")]
    assert len(problems) == 2
    assert any("runtime.memory_bytes" in line for line in problems)
    assert any("runtime.bogus" in line for line in problems)


@pytest.mark.parametrize("content", [b"\xff\xfe[runtime]\n", b"[runtime\npolicy = 1\n"], ids=["not-utf8", "not-toml"])
def test_an_unusable_config_file_is_reported_and_the_run_goes_on(
    content: bytes, workspace: Path, run_cli: CliRunner
) -> None:
    (workspace / ".ptc-plus").mkdir()
    (workspace / ".ptc-plus" / "config.toml").write_bytes(content)
    done = run_cli("exec", "--workspace", str(workspace), "--policy", "danger-full-access", stdin="return 7")
    assert done.code == 0 and "=> 7" in done.out
    assert "Traceback" not in done.err
    assert any(line.startswith("config problem PTC-") and "config.toml" in line for line in done.err.splitlines())


def test_exec_executor_may_not_weaken_a_configured_executor(
    workspace: Path, user_config: Path, run_cli: CliRunner
) -> None:
    # ADR 0127: a file's [runtime] executor is a floor; --executor may only choose a stronger boundary.
    _configure(user_config, '[runtime]\nexecutor = "gvisor"\n')
    done = run_cli("exec", "--workspace", str(workspace), "--executor", "bubblewrap", stdin="return 1")
    assert done.code == 2
    assert "PTC-4031" in done.err and str(user_config) in done.err and "gvisor" in done.err
