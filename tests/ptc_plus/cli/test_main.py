"""``ptc_plus.cli.main``: exit codes every command shares (ADR 0059)."""

from __future__ import annotations

import pytest

from tests.cli_runner import CliRunner


def _interrupt() -> None:
    raise KeyboardInterrupt


@pytest.mark.parametrize("as_json", [[], ["--json"]])
def test_ctrl_c_exits_130_without_a_traceback(
    run_cli: CliRunner, monkeypatch: pytest.MonkeyPatch, as_json: list[str]
) -> None:
    monkeypatch.setattr("ptc_plus.cli.plugins._rows", _interrupt)
    done = run_cli("plugins", *as_json)
    # click ends the line the terminal echoed ^C on; then one line says what happened.
    assert (done.code, done.out, done.err) == (130, "", "\nptc-plus: interrupted\n")


def test_a_group_without_its_subcommand_shows_its_help(run_cli: CliRunner) -> None:
    done = run_cli("capabilities")
    assert done.code == 2 and done.out == ""
    assert "Commands:" in done.err and "  plan " in done.err
    assert done.err.endswith("ptc-plus: PTC-1001: Usage error: Missing command.\n")


def test_a_parse_error_still_shows_the_usage(run_cli: CliRunner) -> None:
    done = run_cli("gate", "--user")
    assert done.code == 2
    assert done.err.splitlines() == [
        "Usage: ptc-plus gate [OPTIONS]",
        "Try 'ptc-plus gate --help' for help.",
        "ptc-plus: PTC-1001: Usage error: Option '--user' requires an argument.",
    ]


def test_an_internal_error_is_one_line_with_a_code(run_cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: object, **__: object) -> None:
        raise TypeError("unsupported operand")

    monkeypatch.setattr("ptc_plus.cli.gate.evaluate_gate", broken)
    done = run_cli("gate", "--user", "u")
    assert done.code == 1 and "Traceback" not in done.err
    assert done.err.startswith("ptc-plus: PTC-1000: Internal error: TypeError: unsupported operand")
    assert "PTC_TRACEBACK=1" in done.err
    monkeypatch.setenv("PTC_TRACEBACK", "1")
    with pytest.raises(TypeError):  # asked for: the real traceback
        run_cli("gate", "--user", "u")
