"""``ptc-plus completion``: the scripts, and completion itself driven as a shell drives it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

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


def test_the_bash_script_calls_back_into_ptc_plus() -> None:
    done = run("completion", "bash")
    assert done.returncode == 0 and done.stderr == ""
    assert "_PTC_PLUS_COMPLETE=bash_complete" in done.stdout
    assert "complete -o nosort -F _ptc_plus_completion ptc-plus" in done.stdout
    assert run("completion").stdout == done.stdout  # bash is the default


@pytest.mark.parametrize(("shell", "marker"), [("zsh", "#compdef ptc-plus"), ("fish", "function _ptc_plus_completion")])
def test_zsh_and_fish_scripts(shell: str, marker: str) -> None:
    done = run("completion", shell)
    assert done.returncode == 0
    assert marker in done.stdout and f"_PTC_PLUS_COMPLETE={shell}_complete" in done.stdout


def test_completing_a_command_name() -> None:
    assert complete("cap") == [("plain", "capabilities")]
    assert ("plain", "completion") in complete("c")


def test_completing_a_subcommand_and_a_shell() -> None:
    assert complete("capabilities", "p") == [("plain", "plan")]
    assert complete("completion", "z") == [("plain", "zsh")]


def test_help_says_how_to_install_it() -> None:
    done = run("completion", "--help")
    assert done.returncode == 0
    assert 'eval "$(ptc-plus completion bash)"' in done.stdout and "~/.bashrc" in done.stdout


def test_an_unknown_shell_is_a_usage_error() -> None:
    done = run("completion", "tcsh")
    assert done.returncode == 2 and "PTC-1001" in done.stderr and "Traceback" not in done.stderr
