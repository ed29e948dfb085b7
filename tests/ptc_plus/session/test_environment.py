"""The ``ptc-capability-environment/v1`` record: one shape carrying the plan, deterministic bytes, diagnosed restore."""

from __future__ import annotations

from typing import Any

import pytest

from hookspecs import SessionRecord
from ptc_plus.config import Disclosure
from ptc_plus.migration import Migrations
from ptc_plus.plan import PLAN_MIGRATIONS, PLAN_VERSION, CapabilityPlan, PlanEntry, Reason, plan_to_json
from ptc_plus.session import environment as environment_module
from ptc_plus.session.environment import KIND, Environment, GateSummary, RestoreStatus, restore

GATE = GateSummary(enabled=True, stage="passed", reason="enabled", debug_run=False)


def environment(**plan: Any) -> Environment:
    entries = (
        PlanEntry(
            identity="host:a",
            disclosure=Disclosure.FULL,
            reason=Reason.EXPLICIT,
            name="a",
            kind="tool",
            revision="sha256:aa",
            cost_tokens=10,
            overage=True,
        ),
        PlanEntry(
            identity="host:b",
            disclosure=Disclosure.ON_DEMAND,
            reason=Reason.NOT_BACKED,
            name="b",
            kind="tool",
            revision="sha256:bb",
            cost_tokens=20,
        ),
        PlanEntry(
            identity="host:c",
            disclosure=Disclosure.OFF,
            reason=Reason.EXPLICIT,
            name="c",
            kind="tool",
            revision="sha256:cc",
            cost_tokens=30,
        ),
        PlanEntry(identity="host:gone", disclosure=None, reason=Reason.HOST_ABSENT),
    )
    fields: dict[str, Any] = {
        "config_revision": "sha256:cfg",
        "management": True,
        "statistics": "unavailable",
        "budget_tokens": 5,
        "used_tokens": 10,
        "overage_tokens": 5,
        "entries": entries,
    } | plan
    return Environment(ptc=True, gate=GATE, token_unit="o200k_base tokens", plan=CapabilityPlan(**fields))


def test_the_record_carries_the_plan_with_versions_and_revisions() -> None:
    record = environment().to_record()
    assert record.kind == KIND and record.version == 1
    payload = record.payload
    assert payload["version"] == 1 and payload["plan"]["version"] == 1
    assert payload["plan"]["config_revision"] == "sha256:cfg"
    assert payload["plan"]["overage_tokens"] == 5
    first = payload["plan"]["entries"][0]
    assert first["identity"] == "host:a" and first["revision"] == "sha256:aa" and first["reason"] == "explicit"
    assert payload["plan"] == plan_to_json(environment().plan)  # one shape: the plan codec's


def test_round_trip_and_deterministic_bytes() -> None:
    original = environment()
    restored = restore([original.to_record()])
    assert restored.status is RestoreStatus.RESTORED
    assert restored.environment == original
    assert restored.environment.to_bytes() == original.to_bytes()
    assert environment().to_bytes() == environment().to_bytes()


def test_names_by_disclosure() -> None:
    env = environment()
    assert env.names(Disclosure.FULL) == {"a"}
    assert env.names(Disclosure.OFF) == {"c"}


def test_no_record_is_missing() -> None:
    other = SessionRecord(kind="something-else/v1", payload={"version": 1})
    assert restore([other]).status is RestoreStatus.MISSING


@pytest.mark.parametrize(
    "payload",
    [
        {"version": 1, "plan": "garbage"},
        {"version": 1},
        {"version": "1", "ptc": True},
        {"not": "an environment"},
    ],
)
def test_a_broken_v1_record_is_corrupt(payload: dict[str, Any]) -> None:
    restored = restore([environment().to_record(), SessionRecord(kind=KIND, payload=payload)])
    assert restored.status is RestoreStatus.CORRUPT
    assert restored.environment is None and restored.detail


def test_an_unknown_field_is_corrupt_not_silently_dropped() -> None:
    payload = environment().payload() | {"surprise": 1}
    assert restore([SessionRecord(kind=KIND, payload=payload)]).status is RestoreStatus.CORRUPT


@pytest.mark.parametrize(
    "record",
    [
        SessionRecord(kind="ptc-capability-environment/v2", payload={"version": 2}, version=2),
        SessionRecord(kind=KIND, payload={"version": 1}, version=3),
    ],
)
def test_an_unknown_format_is_unsupported_not_corrupt(record: SessionRecord) -> None:
    restored = restore([environment().to_record(), record])
    assert restored.status is RestoreStatus.UNSUPPORTED
    assert restored.environment is None


def test_a_newer_payload_or_plan_version_is_unsupported() -> None:
    newer = environment().payload() | {"version": 2}
    assert restore([SessionRecord(kind=KIND, payload=newer)]).status is RestoreStatus.UNSUPPORTED
    payload = environment().payload()
    payload["plan"] = dict(payload["plan"], version=9)
    assert restore([SessionRecord(kind=KIND, payload=payload)]).status is RestoreStatus.UNSUPPORTED


def test_the_latest_record_wins() -> None:
    first, second = environment(budget_tokens=1), environment(budget_tokens=2)
    restored = restore([first.to_record(), second.to_record()])
    assert restored.environment == second


def _v0_payload() -> dict[str, Any]:
    """A fake version 0 (no release wrote one): ``code_mode`` for ``ptc``, and a plan whose budget was ``budget``."""
    payload = environment().payload()
    payload["version"] = 0
    payload["code_mode"] = payload.pop("ptc")
    payload["plan"]["version"] = 0
    payload["plan"]["budget"] = payload["plan"].pop("budget_tokens")
    return payload


def _env_v0_to_v1(data: dict[str, Any]) -> dict[str, Any]:
    data["ptc"] = data.pop("code_mode")
    return data


def _plan_v0_to_v1(data: dict[str, Any]) -> dict[str, Any]:
    data["budget_tokens"] = data.pop("budget")
    return data


@pytest.fixture
def v0_known(monkeypatch: pytest.MonkeyPatch) -> None:
    """Registers the fake version 0 on the chains restore reads through."""
    monkeypatch.setattr(environment_module, "MIGRATIONS", Migrations(current=1, steps={0: _env_v0_to_v1}))
    monkeypatch.setattr(environment_module, "PLAN_MIGRATIONS", Migrations(current=1, steps={0: _plan_v0_to_v1}))


@pytest.mark.usefixtures("v0_known")
def test_a_legal_older_record_migrates_in_memory_and_the_original_is_kept() -> None:
    payload = _v0_payload()
    record = SessionRecord(kind="ptc-capability-environment/v0", payload=payload, version=0)
    restored = restore([record])
    assert restored.status is RestoreStatus.RESTORED
    assert restored.environment == environment()
    assert record.payload == _v0_payload()  # never overwritten, not even in memory


def test_an_older_record_without_a_migration_is_unsupported() -> None:
    record = SessionRecord(kind="ptc-capability-environment/v0", payload=_v0_payload(), version=0)
    restored = restore([environment().to_record(), record])
    assert restored.status is RestoreStatus.UNSUPPORTED and restored.environment is None
    payload = environment().payload()
    payload["plan"]["version"] = 0  # a v1 record around a plan no step reads
    assert restore([SessionRecord(kind=KIND, payload=payload)]).status is RestoreStatus.UNSUPPORTED


@pytest.mark.usefixtures("v0_known")
def test_an_older_record_its_step_cannot_migrate_is_corrupt() -> None:
    payload = _v0_payload()
    del payload["code_mode"]
    record = SessionRecord(kind="ptc-capability-environment/v0", payload=payload, version=0)
    restored = restore([record])
    assert restored.status is RestoreStatus.CORRUPT and "version 0" in restored.detail


@pytest.mark.usefixtures("v0_known")
def test_a_newer_record_stays_unsupported_with_older_ones_known() -> None:
    newer = environment().payload() | {"version": 2}
    restored = restore([SessionRecord(kind=KIND, payload=newer)])
    assert restored.status is RestoreStatus.UNSUPPORTED and "version 2" in restored.detail


def test_every_released_version_has_its_chain() -> None:
    """Raising ``VERSION`` or ``PLAN_VERSION`` without a step from the old one fails here."""
    assert environment_module.MIGRATIONS.current == environment_module.VERSION
    assert all(environment_module.MIGRATIONS.reads(v) for v in range(1, environment_module.VERSION + 1))
    assert PLAN_MIGRATIONS.current == PLAN_VERSION
    assert all(PLAN_MIGRATIONS.reads(v) for v in range(1, PLAN_VERSION + 1))
