"""Resolving gate settings: environment over config per key, PTC_DEBUG_RUN, PTC_SEQUENTIAL, config blockers."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptc_plus.config import LoadedConfig, load_config
from ptc_plus.gate import evaluate_gate, resolve_gate_settings, sandbox_environment
from ptc_plus.gate_values import parse_list


def loaded_from(tmp_path: Path, workspace_toml: str, user_toml: str | None = None) -> LoadedConfig:
    workspace = tmp_path / "ws"
    (workspace / ".ptc-plus").mkdir(parents=True)
    (workspace / ".ptc-plus" / "config.toml").write_text(workspace_toml, encoding="utf-8")
    user_file = tmp_path / "user.toml"
    if user_toml is not None:
        user_file.write_text(user_toml, encoding="utf-8")
    return load_config(workspace, user_file=user_file)


@pytest.mark.parametrize(
    ("raw", "debug_run"),
    [(None, False), ("", False), ("   ", False), ("opt-in", True), (" opt-out ", True), ("true", True), ("junk", True)],
)
def test_debug_run_follows_the_trimmed_raw_value(raw: str | None, debug_run: bool) -> None:
    env = {} if raw is None else {"PTC_DEBUG": raw}
    settings = resolve_gate_settings(env)
    assert settings.debug_run is debug_run
    assert sandbox_environment(settings) == {"PTC_DEBUG_RUN": "true" if debug_run else "false"}


def test_debug_run_is_reported_even_when_the_gate_refuses() -> None:
    settings = resolve_gate_settings({"PTC_MODE": "off", "PTC_DEBUG": "opt-in"})
    assert evaluate_gate(settings, user_id="u", title="useptc").debug_run is True


@pytest.mark.parametrize(
    ("raw", "sequential", "warned"),
    [
        (None, False, False),
        ("true", True, False),
        (" TRUE ", True, False),
        ("false", False, False),
        ("yes", False, True),
    ],
)
def test_sequential(raw: str | None, sequential: bool, warned: bool) -> None:
    settings = resolve_gate_settings({} if raw is None else {"PTC_SEQUENTIAL": raw})
    assert settings.sequential is sequential
    assert [w.code for w in settings.warnings] == (["PTC-4104"] if warned else [])


def test_config_applies_when_the_environment_is_silent(tmp_path: Path) -> None:
    loaded = loaded_from(tmp_path, '[gate]\nmode = "off"\n')
    decision = evaluate_gate(resolve_gate_settings({}, loaded), user_id="u")
    assert (decision.enabled, decision.reason) == (False, "mode-off")


def test_environment_wins_over_config_per_key(tmp_path: Path) -> None:
    loaded = loaded_from(
        tmp_path,
        '[gate]\nmode = "off"\ntoolset_blocklist = ["web"]\ndebug = "opt-in"\nrollout_percent = 0\n',
    )
    env = {"PTC_MODE": "on", "PTC_ROLLOUT_PERCENT": "100"}
    settings = resolve_gate_settings(env, loaded)
    # mode and rollout come from the environment; blocklist and debug still from the file
    assert evaluate_gate(settings, user_id="u", toolsets=["web"]).reason == "toolset-blocked"
    assert evaluate_gate(settings, user_id="u", title="x").reason == "title-lacks-useptc"
    assert evaluate_gate(settings, user_id="u", title="useptc").enabled is True


def test_blank_environment_value_does_not_override_config(tmp_path: Path) -> None:
    loaded = loaded_from(tmp_path, '[gate]\nmode = "off"\n')
    settings = resolve_gate_settings({"PTC_MODE": "  "}, loaded)
    assert evaluate_gate(settings, user_id="u").reason == "mode-off"


def test_config_values_use_the_environment_syntax(tmp_path: Path) -> None:
    loaded = loaded_from(
        tmp_path,
        "",
        user_toml=(
            '[gate]\nmode = "Partial"\nuser_allowlist = ["alice", " bob "]\nrollout_percent = 100\nsequential = true\n'
        ),
    )
    settings = resolve_gate_settings({}, loaded)
    assert settings.user_allowlist == frozenset({"alice", "bob"})
    assert settings.sequential is True
    assert evaluate_gate(settings, user_id="bob").enabled is True


def test_invalid_config_value_warns_naming_the_file(tmp_path: Path) -> None:
    loaded = loaded_from(tmp_path, '[gate]\nmode = "sometimes"\n')
    settings = resolve_gate_settings({}, loaded)
    assert evaluate_gate(settings, user_id="u").reason == "mode-invalid"
    text = settings.warnings[0].message("en")
    assert "config.toml" in text and "gate.mode" in text
    assert "环境变量" not in settings.warnings[0].message("zh") and "gate.mode" in settings.warnings[0].message("zh")


def test_unusable_gate_key_fails_closed_unless_the_environment_sets_it(tmp_path: Path) -> None:
    loaded = loaded_from(tmp_path, "[gate]\ntoolset_blocklist = { web = true }\n")
    assert [b.key for b in loaded.gate_blockers] == ["toolset_blocklist"]
    closed = evaluate_gate(resolve_gate_settings({}, loaded), user_id="u")
    assert (closed.enabled, closed.stage, closed.reason) == (False, "mode", "config-invalid")
    assert [w.code for w in closed.warnings] == ["PTC-4105"]
    rescued = evaluate_gate(resolve_gate_settings({"PTC_TOOLSET_BLOCKLIST": "web"}, loaded), user_id="u")
    assert rescued.enabled is True


def test_misspelt_gate_key_fails_closed(tmp_path: Path) -> None:
    loaded = loaded_from(tmp_path, '[gate]\nmdoe = "off"\n')
    decision = evaluate_gate(resolve_gate_settings({"PTC_MODE": "on"}, loaded), user_id="u")
    assert decision.reason == "config-invalid"


def test_unparsable_config_file_fails_closed(tmp_path: Path) -> None:
    loaded = loaded_from(tmp_path, "[gate\nmode = on\n")
    decision = evaluate_gate(resolve_gate_settings({"PTC_MODE": "on"}, loaded), user_id="u")
    assert (decision.enabled, decision.reason) == (False, "config-invalid")


def test_a_workspace_value_does_not_reopen_what_a_broken_user_value_closed(tmp_path: Path) -> None:
    # A repository may only narrow the gate (ADR 0086): the user's unusable mode keeps it closed.
    loaded = loaded_from(tmp_path, '[gate]\nmode = "on"\n', user_toml="[gate]\nmode = [1, 2]\n")
    assert [blocker.key for blocker in loaded.gate_blockers] == ["mode"]
    assert evaluate_gate(resolve_gate_settings({}, loaded), user_id="u").enabled is False
    assert evaluate_gate(resolve_gate_settings({"PTC_MODE": "on"}, loaded), user_id="u").enabled is True


items = st.lists(st.text(alphabet=st.characters(blacklist_characters=",", blacklist_categories=["Cs"])), max_size=6)


@settings(deadline=None)  # a property of the parse, not of its speed
@given(items)
def test_list_parsing_round_trips_trimmed_non_empty_items(values: list[str]) -> None:
    expected = {v.strip() for v in values} - {""}
    parsed = parse_list(",".join(values))
    assert parsed == (expected or None)
    if parsed is not None:
        assert parse_list(" , ".join(sorted(parsed))) == parsed
