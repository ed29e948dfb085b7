"""A new session's plan reads the workspace and user statistics stores: who votes, and what each reason says."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptc_plus.capabilities.cost import offline_counter
from ptc_plus.config import Disclosure, load_config
from ptc_plus.plan import CapabilityPlan, Reason, Scope, reason_text
from ptc_plus.plan.model import Shortfall
from ptc_plus.session.provision import session_plan
from ptc_plus.statistics import (
    user_store,
    workspace_store,
)
from tests.statistics_samples import demo_catalog, record_families

from .conftest import EVIDENCE_BUDGET, entry_of, write_config

FULL, ON_DEMAND = Disclosure.FULL, Disclosure.ON_DEMAND
CONVERTER, READER, SEARCH = "host:convert_units", "host:read_file", "host:search_files"
STATISTICS = "\n[statistics]\nmin_samples = 3\nwindow = 10\n"


def plan_in(workspace: Path) -> CapabilityPlan:
    return session_plan(demo_catalog(workspace), load_config(workspace), offline_counter(), workspace=workspace)


def test_without_stores_statistics_are_unavailable_and_the_reasons_say_so(workspace: Path) -> None:
    write_config(workspace, budget=EVIDENCE_BUDGET, baseline=[READER], extra=STATISTICS)
    plan = plan_in(workspace)
    assert plan.statistics == "unavailable" and plan.statistics_detail == ""
    reader = entry_of(plan, READER)
    assert (reader.disclosure, reader.reason, reader.window, reader.passed_over) == (FULL, Reason.BASELINE, None, ())
    assert reason_text(reader, "en") == "in the manual baseline (rank 1)"


def test_sufficient_workspace_statistics_replace_the_baseline(workspace: Path) -> None:
    write_config(workspace, budget=EVIDENCE_BUDGET, baseline=[READER], extra=STATISTICS)
    record_families(workspace_store(workspace), workspace, ["f1", "f2", "f3"], [CONVERTER, SEARCH])
    plan = plan_in(workspace)
    assert plan.statistics == "usable"
    converter, reader = entry_of(plan, CONVERTER), entry_of(plan, READER)
    assert (converter.disclosure, converter.reason, converter.scope) == (
        FULL,
        Reason.WORKSPACE_STATISTICS,
        Scope.WORKSPACE,
    )
    assert (converter.coverage, converter.samples, converter.window) == (1.0, 3, 10)
    text = reason_text(converter, "en")
    assert text == "workspace statistics: used in 3 of 3 families (100%), window 10"
    # Never used in 3 families: sufficient statistics take the baseline's place, so it is not backed.
    assert (reader.disclosure, reader.reason, reader.coverage) == (ON_DEMAND, Reason.WORKSPACE_STATISTICS, 0.0)
    assert "below the threshold" in reason_text(reader, "en")


def test_too_few_workspace_samples_fall_back_to_the_user_scope_and_say_why(workspace: Path) -> None:
    write_config(workspace, budget=EVIDENCE_BUDGET, extra=STATISTICS)
    record_families(workspace_store(workspace), workspace, ["f1", "f2"], [CONVERTER])
    record_families(user_store(), workspace, ["u1", "u2", "u3", "u4"], [CONVERTER])
    converter = entry_of(plan_in(workspace), CONVERTER)
    assert (converter.disclosure, converter.reason, converter.samples) == (FULL, Reason.USER_STATISTICS, 4)
    assert converter.passed_over == (Shortfall(scope=Scope.WORKSPACE, samples=2, min_samples=3),)
    text = reason_text(converter, "en")
    assert text == (
        "user-global statistics: used in 4 of 4 families (100%), window 10 "
        "(fallback: workspace has 2 of the 3 samples needed)"
    )


def test_a_capability_neither_scope_can_decide_names_both_shortfalls(workspace: Path) -> None:
    write_config(workspace, budget=EVIDENCE_BUDGET, baseline=[READER], extra=STATISTICS)
    record_families(user_store(), workspace, ["u1"], [READER])
    reader = entry_of(plan_in(workspace), READER)
    assert (reader.disclosure, reader.reason) == (FULL, Reason.BASELINE)
    assert reason_text(reader, "en") == (
        "in the manual baseline (rank 1); statistics could not decide (window 10): "
        "workspace has no sample; user-global has 1 of the 3 samples needed"
    )


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (b'{"version": 1, "next_seq', "PTC-5002"),  # truncated mid-write
        (b"\x00garbage\xff", "PTC-5002"),
        (b'{"version": 99}', "PTC-5003"),  # written by a newer release
    ],
    ids=["truncated", "garbage", "future-version"],
)
def test_a_damaged_workspace_store_loses_the_whole_vote_with_its_own_diagnostic(
    workspace: Path, content: bytes, code: str
) -> None:
    write_config(workspace, budget=EVIDENCE_BUDGET, baseline=[READER], extra=STATISTICS)
    # The user scope would back the converter: a damaged workspace store must not let it speak instead.
    record_families(user_store(), workspace, ["u1", "u2", "u3"], [CONVERTER])
    path = workspace_store(workspace).path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    plan = plan_in(workspace)
    assert plan.statistics == "corrupt"
    assert plan.statistics_detail.startswith(f"{code}: ") and str(path) in plan.statistics_detail
    assert plan.members(FULL) == (READER,)  # baseline planning
    converter = entry_of(plan, CONVERTER)
    assert (converter.reason, converter.coverage) == (Reason.NOT_BACKED, None)
    assert reason_text(converter, "en") == "no sufficient statistics and not in the baseline"
    assert path.read_bytes() == content  # never overwritten


def test_a_damaged_user_store_costs_only_the_fallback(workspace: Path) -> None:
    write_config(workspace, budget=EVIDENCE_BUDGET, extra=STATISTICS)
    record_families(workspace_store(workspace), workspace, ["f1", "f2", "f3"], [SEARCH])
    user = user_store().path
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_bytes(b"not json")
    plan = plan_in(workspace)
    assert plan.statistics == "workspace-only" and plan.statistics_detail.startswith("PTC-5002: ")
    search = entry_of(plan, SEARCH)
    assert (search.disclosure, search.reason) == (FULL, Reason.WORKSPACE_STATISTICS)
    # Nothing here could fall back to the user scope; only the workspace's shortfall is named.
    assert entry_of(plan, CONVERTER).reason is Reason.WORKSPACE_STATISTICS


def test_a_damaged_user_store_with_no_workspace_store_leaves_no_vote(workspace: Path) -> None:
    write_config(workspace, extra=STATISTICS)
    user = user_store().path
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_bytes(b'{"version": 99}')
    plan = plan_in(workspace)
    assert plan.statistics == "corrupt" and plan.statistics_detail.startswith("PTC-5003: ")


def test_statistics_switched_off_in_the_config_are_not_read(workspace: Path) -> None:
    write_config(workspace, extra="\n[statistics]\nenabled = false\n")
    path = workspace_store(workspace).path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"garbage")
    plan = plan_in(workspace)
    assert (plan.statistics, plan.statistics_detail) == ("disabled", "")


def test_management_off_records_the_store_state_but_no_statistics(workspace: Path) -> None:
    write_config(workspace, enabled=False)
    record_families(workspace_store(workspace), workspace, ["f1"], [SEARCH])
    plan = plan_in(workspace)
    assert plan.statistics == "usable"
    assert {(e.reason, e.coverage) for e in plan.entries} == {(Reason.MANAGEMENT_OFF, None)}
