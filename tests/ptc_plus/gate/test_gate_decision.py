"""Truth table of the deployment gate: every stage, every documented edge."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from ptc_plus.gate import GateDecision, evaluate_gate, resolve_gate_settings, rollout_bucket

USERS = [f"user-{n}" for n in range(200)]


def decide(
    env: Mapping[str, str],
    *,
    user: str | None = "alice",
    toolsets: Sequence[str] = (),
    title: str | None = None,
) -> GateDecision:
    return evaluate_gate(resolve_gate_settings(env), user_id=user, toolsets=toolsets, title=title)


def codes(decision: GateDecision) -> list[str]:
    return [warning.code for warning in decision.warnings]


def outcome(decision: GateDecision) -> tuple[bool, str, str]:
    return decision.enabled, str(decision.stage), decision.reason


# (case id, environment, user, toolsets, title) -> (enabled, stage, reason)
TABLE = [
    ("default-on", {}, "alice", (), None, (True, "debug", "no-debug-filter")),
    ("mode-on", {"PTC_MODE": "on"}, "alice", (), None, (True, "debug", "no-debug-filter")),
    ("mode-trimmed-case", {"PTC_MODE": "  ON "}, "alice", (), None, (True, "debug", "no-debug-filter")),
    ("mode-off", {"PTC_MODE": "off"}, "alice", (), None, (False, "mode", "mode-off")),
    ("mode-blank-is-unset", {"PTC_MODE": "   "}, "alice", (), None, (True, "debug", "no-debug-filter")),
    (
        "partial-allowed",
        {"PTC_MODE": "partial", "PTC_USER_ALLOWLIST": " bob , alice ,"},
        "alice",
        (),
        None,
        (True, "debug", "no-debug-filter"),
    ),
    (
        "partial-not-listed",
        {"PTC_MODE": "partial", "PTC_USER_ALLOWLIST": "bob"},
        "alice",
        (),
        None,
        (False, "mode", "user-not-allowlisted"),
    ),
    ("partial-no-list", {"PTC_MODE": "partial"}, "alice", (), None, (False, "mode", "user-not-allowlisted")),
    (
        "partial-no-user",
        {"PTC_MODE": "partial", "PTC_USER_ALLOWLIST": "alice"},
        None,
        (),
        None,
        (False, "mode", "no-user-id"),
    ),
    (
        "partial-empty-user",
        {"PTC_MODE": "partial", "PTC_USER_ALLOWLIST": "alice"},
        "",
        (),
        None,
        (False, "mode", "no-user-id"),
    ),
    (
        "blocked",
        {"PTC_TOOLSET_BLOCKLIST": "web"},
        "alice",
        ("files", "web"),
        None,
        (False, "toolsets", "toolset-blocked"),
    ),
    (
        "blocklist-wins",
        {"PTC_TOOLSET_BLOCKLIST": "web", "PTC_TOOLSET_ALLOWLIST": "web,files"},
        "alice",
        ("web",),
        None,
        (False, "toolsets", "toolset-blocked"),
    ),
    (
        "not-in-allowlist",
        {"PTC_TOOLSET_ALLOWLIST": "files"},
        "alice",
        ("files", "web"),
        None,
        (False, "toolsets", "toolset-not-allowlisted"),
    ),
    (
        "all-in-allowlist",
        {"PTC_TOOLSET_ALLOWLIST": " files , web "},
        "alice",
        ("files", "web"),
        None,
        (True, "debug", "no-debug-filter"),
    ),
    (
        "empty-toolsets-pass",
        {"PTC_TOOLSET_ALLOWLIST": "files", "PTC_TOOLSET_BLOCKLIST": "web"},
        "alice",
        (),
        None,
        (True, "debug", "no-debug-filter"),
    ),
    (
        "empty-lists-unset",
        {"PTC_TOOLSET_ALLOWLIST": " , "},
        "alice",
        ("web",),
        None,
        (True, "debug", "no-debug-filter"),
    ),
    ("rollout-zero", {"PTC_ROLLOUT_PERCENT": "0"}, "alice", (), "useptc", (False, "rollout", "rollout-zero")),
    ("rollout-100", {"PTC_ROLLOUT_PERCENT": "100"}, "alice", (), None, (True, "debug", "no-debug-filter")),
    ("opt-in-no-marker", {"PTC_DEBUG": "opt-in"}, "alice", (), "plain", (False, "debug", "title-lacks-useptc")),
    (
        "opt-in-marker-any-case",
        {"PTC_DEBUG": "opt-in"},
        "alice",
        (),
        "Try UsePTC here",
        (True, "debug", "title-has-useptc"),
    ),
    ("opt-in-missing-title", {"PTC_DEBUG": "opt-in"}, "alice", (), None, (False, "debug", "title-lacks-useptc")),
    ("legacy-true-is-opt-in", {"PTC_DEBUG": "TRUE"}, "alice", (), "no marker", (False, "debug", "title-lacks-useptc")),
    ("legacy-true-marker", {"PTC_DEBUG": " true "}, "alice", (), "x useptc", (True, "debug", "title-has-useptc")),
    ("debug-trimmed-lowered", {"PTC_DEBUG": "  Opt-Out "}, "alice", (), "NonPTC", (False, "debug", "title-has-nonptc")),
    ("opt-out-no-marker", {"PTC_DEBUG": "opt-out"}, "alice", (), "plain", (True, "debug", "title-lacks-nonptc")),
    ("opt-out-missing-title", {"PTC_DEBUG": "opt-out"}, "alice", (), None, (True, "debug", "title-lacks-nonptc")),
    (
        "kill-switch-beats-debug",
        {"PTC_MODE": "off", "PTC_DEBUG": "opt-in"},
        "alice",
        (),
        "useptc",
        (False, "mode", "mode-off"),
    ),
    (
        "allowlist-beats-debug",
        {"PTC_MODE": "partial", "PTC_USER_ALLOWLIST": "bob", "PTC_DEBUG": "opt-out"},
        "alice",
        (),
        "anything",
        (False, "mode", "user-not-allowlisted"),
    ),
    (
        "blocklist-beats-debug",
        {"PTC_TOOLSET_BLOCKLIST": "web", "PTC_DEBUG": "opt-in"},
        "alice",
        ("web",),
        "useptc",
        (False, "toolsets", "toolset-blocked"),
    ),
]


@pytest.mark.parametrize(
    ("env", "user", "toolsets", "title", "expected"),
    [case[1:] for case in TABLE],
    ids=[case[0] for case in TABLE],
)
def test_truth_table(
    env: dict[str, str],
    user: str | None,
    toolsets: tuple[str, ...],
    title: str | None,
    expected: tuple[bool, str, str],
) -> None:
    decision = decide(env, user=user, toolsets=toolsets, title=title)
    assert outcome(decision) == expected
    assert decision.warnings == ()


@pytest.mark.parametrize("value", ["maybe", "enabled", "1", "of f"])
def test_invalid_mode_is_off_with_warning(value: str) -> None:
    decision = decide({"PTC_MODE": value, "PTC_DEBUG": "opt-in"}, title="useptc")
    assert outcome(decision) == (False, "mode", "mode-invalid")
    assert codes(decision) == ["PTC-4101"]
    assert value in decision.warnings[0].message("en")


@pytest.mark.parametrize("value", ["abc", "-1", "101", "50.5", "1e2", "+5", "１０"])
def test_invalid_rollout_percent_counts_as_zero_with_warning(value: str) -> None:
    decision = decide({"PTC_ROLLOUT_PERCENT": value})
    assert outcome(decision) == (False, "rollout", "rollout-zero")
    assert codes(decision) == ["PTC-4102"]


@pytest.mark.parametrize("value", ["debug", "1", "yes", "opt_in"])
def test_invalid_debug_means_no_filter_with_warning(value: str) -> None:
    decision = decide({"PTC_DEBUG": value}, title="nonptc and no useptc either")
    assert outcome(decision) == (True, "debug", "no-debug-filter")
    assert codes(decision) == ["PTC-4103"]
    assert decision.debug_run is True  # the raw value is non-empty, so this is still a debug run


def test_rollout_admits_exactly_the_buckets_below_the_percent() -> None:
    percent = 37
    for user in USERS:
        decision = decide({"PTC_ROLLOUT_PERCENT": str(percent)}, user=user)
        expected = rollout_bucket(user, "ptc-rollout") < percent
        assert decision.enabled is expected
        if not expected:
            assert outcome(decision) == (False, "rollout", "rollout-excluded")
    admitted = sum(decide({"PTC_ROLLOUT_PERCENT": str(percent)}, user=u).enabled for u in USERS)
    assert 0 < admitted < len(USERS)


def test_rollout_uses_the_configured_salt() -> None:
    salt = "spring-wave"
    users = [u for u in USERS if (rollout_bucket(u, salt) < 50) != (rollout_bucket(u, "ptc-rollout") < 50)]
    assert users, "some user must land on different sides of 50 under the two salts"
    user = users[0]
    with_salt = decide({"PTC_ROLLOUT_PERCENT": "50", "PTC_ROLLOUT_SALT": salt}, user=user)
    default = decide({"PTC_ROLLOUT_PERCENT": "50"}, user=user)
    assert with_salt.enabled is (rollout_bucket(user, salt) < 50)
    assert with_salt.enabled is not default.enabled


def test_missing_user_still_rolls_out_deterministically() -> None:
    first = decide({"PTC_ROLLOUT_PERCENT": "50"}, user=None)
    assert first == decide({"PTC_ROLLOUT_PERCENT": "50"}, user="")
    assert first.enabled is (rollout_bucket("", "ptc-rollout") < 50)


def test_decision_json_has_exactly_the_documented_keys() -> None:
    decision = decide({"PTC_MODE": "bogus", "PTC_DEBUG": "opt-in"})
    data = decision.to_json("en")
    assert list(data) == ["enabled", "stage", "reason", "debug_run", "warnings"]
    assert data["enabled"] is False and data["debug_run"] is True
    assert data["warnings"][0].startswith("PTC-4101: ")
