"""``ptc-plus completion``: the scripts (through ``main`` in this process), and completion itself driven as a shell
drives it: the real command with ``COMP_WORDS`` in its environment, answering on its standard output."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_runner import CliRunner

CLI = str(Path(sys.executable).with_name("ptc-plus"))


def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    merged = {k: v for k, v in os.environ.items() if not k.startswith(("_PTC_PLUS", "COMP_"))}
    return subprocess.run(
        [CLI, *args], capture_output=True, text=True, env={**merged, "PTC_LOCALE": "en", **env}, timeout=120
    )


def complete(*words: str) -> list[tuple[str, str]]:
    """What bash's completion function gets for the command line ``words`` (the last one being typed)."""
    done = run(
        COMP_WORDS=" ".join(["ptc-plus", *words]), COMP_CWORD=str(len(words)), _PTC_PLUS_COMPLETE="bash_complete"
    )
    assert done.returncode == 0, done.stderr
    kinds_values = [line.split(",", 1) for line in done.stdout.splitlines()]
    return [(kind, value) for kind, value in kinds_values]


def test_the_bash_script_calls_back_into_ptc_plus(run_cli: CliRunner) -> None:
    done = run_cli("completion", "bash")
    assert done.code == 0 and done.err == ""
    assert "_PTC_PLUS_COMPLETE=bash_complete" in done.out
    assert "complete -o nosort -F _ptc_plus_completion ptc-plus" in done.out
    assert run_cli("completion").out == done.out  # bash is the default


@pytest.mark.parametrize(("shell", "marker"), [("zsh", "#compdef ptc-plus"), ("fish", "function _ptc_plus_completion")])
def test_zsh_and_fish_scripts(run_cli: CliRunner, shell: str, marker: str) -> None:
    done = run_cli("completion", shell)
    assert done.code == 0
    assert marker in done.out and f"_PTC_PLUS_COMPLETE={shell}_complete" in done.out


def test_completing_a_command_name() -> None:
    assert complete("cap") == [("plain", "capabilities")]
    assert ("plain", "completion") in complete("c")


def test_completing_a_subcommand_and_a_shell() -> None:
    assert complete("capabilities", "p") == [("plain", "plan")]
    assert complete("completion", "z") == [("plain", "zsh")]


def test_help_says_how_to_install_it(run_cli: CliRunner) -> None:
    done = run_cli("completion", "--help")
    assert done.code == 0
    assert 'eval "$(ptc-plus completion bash)"' in done.out and "~/.bashrc" in done.out


def test_an_unknown_shell_is_a_usage_error(run_cli: CliRunner) -> None:
    done = run_cli("completion", "tcsh")
    assert done.code == 2 and "PTC-1001" in done.err and "Traceback" not in done.err
