"""The migration framework: a version and a chain of steps, newer versions refused, input never changed."""

from __future__ import annotations

from typing import Any

import pytest

from ptc_plus.migration import Migrations, StepFailed, VersionTooNew, VersionUnknown


def rename(data: dict[str, Any]) -> dict[str, Any]:
    data["items"] = data.pop("things")
    return data


def count(data: dict[str, Any]) -> dict[str, Any]:
    data["count"] = len(data["items"])
    return data


CHAIN = Migrations(current=3, steps={1: rename, 2: count})


def test_steps_run_in_order_up_to_the_current_version() -> None:
    original = {"version": 1, "things": ["a", "b"]}
    upgraded = CHAIN.upgrade(original)
    assert upgraded.data == {"version": 3, "items": ["a", "b"], "count": 2}
    assert upgraded.from_version == 1 and upgraded.migrated
    assert original == {"version": 1, "things": ["a", "b"]}  # the input is never changed


def test_a_middle_version_runs_only_the_rest() -> None:
    assert CHAIN.upgrade({"version": 2, "items": []}).data == {"version": 3, "items": [], "count": 0}


def test_the_current_version_passes_through() -> None:
    upgraded = CHAIN.upgrade({"version": 3, "items": [], "count": 0})
    assert not upgraded.migrated and upgraded.from_version == 3


def test_a_newer_version_is_refused() -> None:
    with pytest.raises(VersionTooNew) as raised:
        CHAIN.upgrade({"version": 4})
    assert (raised.value.found, raised.value.supported) == (4, 3)


@pytest.mark.parametrize("version", [0, None, "1", True, 1.0])
def test_an_unknown_version_is_refused(version: object) -> None:
    data = {"things": []} if version is None else {"version": version, "things": []}
    with pytest.raises(VersionUnknown):
        CHAIN.upgrade(data)


def test_a_malformed_old_payload_fails_its_step() -> None:
    with pytest.raises(StepFailed) as raised:
        CHAIN.upgrade({"version": 1})
    assert raised.value.version == 1


def test_steps_must_be_consecutive() -> None:
    with pytest.raises(ValueError):
        Migrations(current=3, steps={0: rename, 2: count})


def test_reads_names_the_versions_with_a_chain_to_the_current_one() -> None:
    assert [v for v in range(-1, 5) if CHAIN.reads(v)] == [1, 2, 3]
    assert Migrations(current=1).reads(1) and not Migrations(current=1).reads(0)
