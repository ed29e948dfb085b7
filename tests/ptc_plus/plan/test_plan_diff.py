"""What a refresh would change, member by member (ADR 0068, ADR 0090): a moved revision is a change at any
callable disclosure, and nothing that changes nothing the model or a program sees is one."""

from __future__ import annotations

import attrs
import pytest

from ptc_plus.capabilities import CapabilityKind
from ptc_plus.config import Disclosure
from ptc_plus.plan import CapabilityPlan, PlanEntry, Reason, plan_diff


def plan(*entries: PlanEntry) -> CapabilityPlan:
    return CapabilityPlan(
        config_revision="c",
        management=True,
        statistics="",
        budget_tokens=0,
        used_tokens=0,
        overage_tokens=0,
        entries=entries,
    )


# A host tool's identity starts with its source (``host:``), not with its kind (ADR 0122).
KIND_OF = {"host": CapabilityKind.TOOL, "skill": CapabilityKind.SKILL, "mcp-resources": CapabilityKind.MCP_RESOURCES}


def entry(identity: str, disclosure: Disclosure | None, revision: str = "sha256:1", **more: object) -> PlanEntry:
    kind = KIND_OF[identity.split(":", 1)[0]]
    return PlanEntry(
        identity=identity,
        disclosure=disclosure,
        reason=Reason.NOT_BACKED,
        name=identity.split(":")[-1],
        kind=kind,
        revision=revision,
        **more,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("identity", ["host:convert_units", "skill:pdf", "mcp-resources:fixture"])
@pytest.mark.parametrize("disclosure", [Disclosure.FULL, Disclosure.ON_DEMAND])
def test_a_callable_member_whose_revision_moved_is_revised(identity: str, disclosure: Disclosure) -> None:
    before = plan(entry(identity, disclosure))
    after = plan(entry(identity, disclosure, revision="sha256:2"))
    diff = plan_diff(before, after)
    assert [c.identity for c in diff.revised] == [identity] and not diff.empty
    assert (diff.added, diff.removed, diff.changed) == ((), (), ())
    assert (diff.revised[0].before, diff.revised[0].after) == (disclosure, disclosure)


def test_a_moved_disclosure_with_a_new_revision_is_one_change_not_two() -> None:
    diff = plan_diff(plan(entry("host:a", Disclosure.FULL)), plan(entry("host:a", Disclosure.ON_DEMAND, "sha256:2")))
    assert [c.identity for c in diff.changed] == ["host:a"] and diff.revised == ()


@pytest.mark.parametrize("disclosure", [Disclosure.OFF, None])
def test_a_member_nobody_can_call_is_never_revised(disclosure: Disclosure | None) -> None:
    diff = plan_diff(plan(entry("host:a", disclosure)), plan(entry("host:a", disclosure, "sha256:2")))
    assert diff.empty


def test_reasons_statistics_and_costs_are_no_change() -> None:
    before = entry("host:a", Disclosure.ON_DEMAND)
    after = attrs.evolve(before, reason=Reason.BASELINE, cost_tokens=99, coverage=0.5, samples=3)
    assert plan_diff(plan(before), plan(after)).empty
