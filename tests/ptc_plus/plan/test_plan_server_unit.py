"""Two-level control (ADR 0071): an MCP server unit ``mcp:<server>`` over its tools and its resource source."""

from __future__ import annotations

import pytest

from ptc_plus.config import CapabilityChoice, Disclosure, ManagementSection, PtcConfig, server_unit, unit_server
from ptc_plus.plan import PlanCandidate, PlanInput, Reason, compute_plan, reason_text

FULL, ON_DEMAND, OFF = Disclosure.FULL, Disclosure.ON_DEMAND, Disclosure.OFF
MEMBERS = ("mcp:git/git_log", "mcp:git/git_status", "mcp-resources:git")
OTHERS = ("mcp:time/get_current_time", "mcp-resources:time", "host:read_file")


def config(choices: dict[str, Disclosure], *, enabled: bool = True) -> PtcConfig:
    # Smaller than the catalog (six members of 10): what the units leave is not all shown in full (fits-budget,
    # ADR 0080), so a member they leave alone keeps the reason of its own evidence.
    return PtcConfig(
        management=ManagementSection(enabled=enabled, budget_tokens=20),
        capabilities={identity: CapabilityChoice(disclosure=value) for identity, value in choices.items()},
    )


def plan(choices: dict[str, Disclosure], *, enabled: bool = True) -> dict[str, tuple[Disclosure | None, Reason]]:
    candidates = [PlanCandidate(identity=identity, cost_tokens=10) for identity in (*MEMBERS, *OTHERS)]
    computed = compute_plan(
        PlanInput(candidates=candidates, config=config(choices, enabled=enabled), config_revision="r")
    )
    return {entry.identity: (entry.disclosure, entry.reason) for entry in computed.entries}


def test_the_unit_off_closes_every_tool_and_the_resource_source_of_that_server_only() -> None:
    got = plan({"mcp:git": OFF})
    assert {identity: got[identity] for identity in MEMBERS} == {m: (OFF, Reason.SERVER_UNIT) for m in MEMBERS}
    assert all(got[identity][0] is ON_DEMAND and got[identity][1] is Reason.NOT_BACKED for identity in OTHERS)
    assert "mcp:git" not in got  # the unit is a switch, never a plan entry (not "host-absent")


def test_the_unit_off_wins_over_a_members_own_setting_which_applies_again_when_the_unit_is_back() -> None:
    own = {"mcp:git/git_log": FULL, "mcp-resources:git": OFF}
    closed = plan({**own, "mcp:git": OFF})
    assert closed["mcp:git/git_log"] == (OFF, Reason.SERVER_UNIT)
    reopened = plan({**own, "mcp:git": ON_DEMAND})
    assert reopened["mcp:git/git_log"] == (FULL, Reason.EXPLICIT)
    assert reopened["mcp-resources:git"] == (OFF, Reason.EXPLICIT)
    assert reopened["mcp:git/git_status"] == (ON_DEMAND, Reason.SERVER_UNIT)
    without_unit = plan(own)
    assert without_unit["mcp:git/git_log"] == (FULL, Reason.EXPLICIT)
    assert without_unit["mcp:git/git_status"] == (ON_DEMAND, Reason.NOT_BACKED)


def test_a_server_level_full_is_the_default_of_members_without_their_own() -> None:
    got = plan({"mcp:git": FULL, "mcp:git/git_status": ON_DEMAND})
    assert got["mcp:git/git_log"] == (FULL, Reason.SERVER_UNIT)
    assert got["mcp-resources:git"] == (FULL, Reason.SERVER_UNIT)
    assert got["mcp:git/git_status"] == (ON_DEMAND, Reason.EXPLICIT)


def test_management_off_keeps_the_hosts_provision_as_for_every_explicit_choice() -> None:
    got = plan({"mcp:git": OFF}, enabled=False)
    assert all(got[identity] == (FULL, Reason.MANAGEMENT_OFF) for identity in MEMBERS)


def test_the_reason_names_the_unit_in_both_locales() -> None:
    candidates = [PlanCandidate(identity="mcp:git/git_log", cost_tokens=1)]
    computed = compute_plan(PlanInput(candidates=candidates, config=config({"mcp:git": OFF}), config_revision="r"))
    (entry,) = computed.entries
    assert "mcp:git" in reason_text(entry, "en") and "mcp:git" in reason_text(entry, "zh")


@pytest.mark.parametrize(
    ("identity", "unit"),
    [
        ("mcp:git/git_log", "mcp:git"),
        ("mcp:git/a/b", "mcp:git"),
        ("mcp-resources:git", "mcp:git"),
        ("mcp:git", None),
        ("mcp:/tool", None),
        ("mcp:git/", None),
        ("mcp:bad name/x", None),
        ("host:mcp:git/x", None),
        ("skill:git", None),
    ],
)
def test_which_identities_belong_to_a_server_unit(identity: str, unit: str | None) -> None:
    assert server_unit(identity) == unit


def test_a_unit_identity_names_its_server() -> None:
    assert unit_server("mcp:git") == "git"
    assert unit_server("mcp:git/log") is None and unit_server("host:git") is None
