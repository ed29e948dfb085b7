"""Did you mean: capability identities, MCP server names, config enum values and ``mcp add`` without ``--``
(issue 30 item 8), all through :func:`ptc_plus.spelling.closest`, in both locales."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptc_plus.i18n import message
from ptc_plus.spelling import closest
from tests.cli_runner import CliRunner


def test_closest_suggests_the_near_name_and_nothing_for_a_known_or_far_one() -> None:
    assert closest("sesion", ["process", "session"]) == "session"
    assert closest("tmie", ["time", "git"]) == "time"
    assert closest("Session", ["process", "session"]) == "session"
    assert closest("session", ["process", "session"]) is None
    assert closest("weather", ["time", "git"]) is None
    # A mapping suggests what a compared form stands for: a bare tool name its identity.
    assert closest("write_file", {"host:write_file": "host:write_file", "write_file": "host:write_file"}) == (
        "host:write_file"
    )


@pytest.mark.parametrize("typed", ["host:writefile", "host:write_fiel"])
def test_set_of_a_misspelt_identity_suggests_the_catalog_s_identity(
    run_cli: CliRunner, workspace: Path, typed: str
) -> None:
    done = run_cli("capabilities", "set", typed, "off", "--workspace", str(workspace))
    assert done.code == 0
    assert "Did you mean 'host:write_file'?" in done.err


def test_set_of_a_bare_tool_name_is_a_usage_error_naming_its_identity(run_cli: CliRunner, workspace: Path) -> None:
    done = run_cli("capabilities", "set", "write_file", "off", "--workspace", str(workspace))
    assert done.code == 2
    assert "PTC-4022" in done.err and "Did you mean 'host:write_file'?" in done.err


def test_set_of_a_misspelt_server_unit_suggests_the_configured_server(run_cli: CliRunner, workspace: Path) -> None:
    assert run_cli("mcp", "add", "time", "--workspace", str(workspace), "--", "mcp-server-time").code == 0
    done = run_cli("capabilities", "set", "mcp:tmie", "off", "--workspace", str(workspace))
    assert "Did you mean 'mcp:time'?" in done.err


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_trust_of_a_misspelt_server_suggests_the_configured_one(
    run_cli: CliRunner, workspace: Path, monkeypatch: pytest.MonkeyPatch, lang: str
) -> None:
    assert run_cli("mcp", "add", "time", "--workspace", str(workspace), "--", "mcp-server-time").code == 0
    monkeypatch.setenv("PTC_LOCALE", lang)
    done = run_cli("mcp", "trust", "tmie", "--workspace", str(workspace))
    assert done.code == 1
    assert "PTC-4302" in done.err and message("ptc.did-you-mean", lang, suggestion="time") in done.err


def test_trust_suggests_nothing_when_no_server_is_close(run_cli: CliRunner, workspace: Path) -> None:
    assert run_cli("mcp", "add", "time", "--workspace", str(workspace), "--", "mcp-server-time").code == 0
    done = run_cli("mcp", "trust", "github", "--workspace", str(workspace))
    assert done.code == 1 and "PTC-4302" in done.err and "Did you mean" not in done.err


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_misspelt_enum_value_in_config_suggests_the_choice(
    run_cli: CliRunner, workspace: Path, monkeypatch: pytest.MonkeyPatch, lang: str
) -> None:
    config = workspace / ".ptc-plus" / "config.toml"
    config.parent.mkdir()
    config.write_text('version = 1\n\n[runtime]\nkernel = "sesion"\n', "utf-8")
    monkeypatch.setenv("PTC_LOCALE", lang)
    done = run_cli("config", "check", "--workspace", str(workspace))
    assert done.code == 1
    expected = message("config.reason.choice-suggestion", lang, choices="process, session", suggestion="session")
    assert "PTC-4010" in done.out + done.err and expected in done.out + done.err


def test_mcp_add_without_the_double_dash_says_to_put_it_before_the_command(run_cli: CliRunner, workspace: Path) -> None:
    done = run_cli(
        "mcp", "add", "time", "uvx", "mcp-server-time", "--local-timezone", "UTC", "--workspace", str(workspace)
    )
    assert done.code == 2
    assert "--local-timezone" in done.err and "put -- before the command" in done.err
    assert not (workspace / ".ptc-plus" / "config.toml").exists()
