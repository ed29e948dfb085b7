"""The plan's JSON is read through its migration chain: older versions migrate, newer ones are refused."""

from __future__ import annotations

from typing import Any

import pytest

from ptc_plus.migration import Migrations, VersionTooNew, VersionUnknown
from ptc_plus.plan import PLAN_VERSION, CapabilityPlan, plan_from_json, plan_to_json
from ptc_plus.plan import codec as plan_codec

PLAN = CapabilityPlan(
    config_revision="sha256:cfg",
    management=True,
    statistics="unavailable",
    budget_tokens=7,
    used_tokens=0,
    overage_tokens=0,
    entries=(),
)


def _budget_renamed(data: dict[str, Any]) -> dict[str, Any]:
    data["budget_tokens"] = data.pop("budget")
    return data


def _v0() -> dict[str, Any]:
    """A fake version 0 (no release wrote one) whose budget was called ``budget``."""
    data = plan_to_json(PLAN)
    data["version"] = 0
    data["budget"] = data.pop("budget_tokens")
    return data


def test_a_registered_older_version_migrates_on_the_real_read_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plan_codec, "PLAN_MIGRATIONS", Migrations(current=PLAN_VERSION, steps={0: _budget_renamed}))
    original = _v0()
    assert plan_from_json(original) == PLAN
    assert original == _v0()  # the input is not changed


def test_an_older_version_without_a_step_is_refused() -> None:
    with pytest.raises(VersionUnknown):
        plan_from_json(_v0())


def test_a_newer_version_is_refused_as_too_new() -> None:
    with pytest.raises(VersionTooNew) as raised:
        plan_from_json(plan_to_json(PLAN) | {"version": PLAN_VERSION + 1})
    assert (raised.value.found, raised.value.supported) == (PLAN_VERSION + 1, PLAN_VERSION)


def test_the_current_version_round_trips() -> None:
    assert plan_from_json(plan_to_json(PLAN)) == PLAN
