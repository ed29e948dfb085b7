"""The contract memory: four events, each persisted, replayed to the same value on resume (ADR 0070)."""

from __future__ import annotations

import threading

import pytest

from hookspecs import AgentRef, CompactionInfo, SessionRecord
from ptc_plus.session.contract_memory import (
    EXPANDED_KIND,
    RECOVERY_PROVENANCE,
    Compacted,
    Contract,
    ContractDesk,
    ContractMemory,
    Event,
    Expanded,
    Recovered,
    Used,
    catalog_kept,
    replay,
    to_record,
)
from ptc_plus.session.projection import CATALOG_PROVENANCE

AGENT = AgentRef(session_id="s", agent_id="a", family_id="s")
A, B = Contract("host:a", "sha256:1"), Contract("host:b", "sha256:2")


def test_replaying_the_records_gives_the_memory_that_wrote_them() -> None:
    events: list[Event] = [
        Expanded(contracts=(A, B), provenance="ptc-plus:expansion:1", shown=("host:a",)),
        Used(identity="host:b"),
        Used(identity="host:a"),
        Compacted(kept=("ptc-plus:expansion:1",)),
        Recovered(shown=("host:b",), named=()),
    ]
    live = ContractMemory()
    for event in events:
        live = live.apply(event)
    assert replay([to_record(e) for e in events]) == live
    assert live.used == ("host:a", "host:b") and live.messages == 1 and not live.recovery_due
    assert live.shown == {"host:a": "ptc-plus:expansion:1", "host:b": RECOVERY_PROVENANCE}


def test_a_use_is_remembered_only_for_expanded_contracts_and_only_when_it_changes_the_order() -> None:
    memory = ContractMemory().apply(Expanded(contracts=(A,)))
    assert memory.use("host:never-expanded") is None
    used = memory.use("host:a")
    assert used == Used(identity="host:a")
    assert memory.apply(used).use("host:a") is None  # a loop calling one tool writes one record


def test_a_1_2_compaction_that_does_not_say_keeps_nothing_visible() -> None:
    memory = ContractMemory().apply(Expanded(contracts=(A,), provenance="ptc-plus:expansion:1", shown=("host:a",)))
    after = memory.apply(Compacted(kept=None))
    assert after.shown == {} and after.recovery_due
    info = CompactionInfo(agent=AGENT, summary="s")
    assert not catalog_kept(info)
    assert catalog_kept(CompactionInfo(agent=AGENT, summary="s", kept_provenances=(CATALOG_PROVENANCE,)))


def test_a_new_revision_is_no_longer_what_its_old_message_shows() -> None:
    memory = ContractMemory().apply(Expanded(contracts=(A,), provenance="ptc-plus:expansion:1", shown=("host:a",)))
    assert memory.visible("host:a", "sha256:1")
    moved = memory.apply(Expanded(contracts=(Contract("host:a", "sha256:9"),)))
    assert not moved.visible("host:a", "sha256:9") and "host:a" not in moved.shown


def test_a_use_of_the_old_revision_is_not_a_use_of_the_new_one() -> None:
    """Recovery re-delivers what was used at the revision expanded: a re-expansion at a new one starts afresh."""
    memory = (
        ContractMemory().apply(Expanded(contracts=(A, B))).apply(Used(identity="host:a")).apply(Used(identity="host:b"))
    )
    moved = memory.apply(Expanded(contracts=(Contract("host:a", "sha256:9"), B)))
    assert moved.used == ("host:b",)  # b kept its revision, so its use stands
    assert moved.apply(Used(identity="host:a")).used == ("host:a", "host:b")


def test_an_unreadable_record_is_skipped_not_fatal(caplog: pytest.LogCaptureFixture) -> None:
    good = to_record(Expanded(contracts=(A,)))
    bad = SessionRecord(kind=EXPANDED_KIND, payload={"version": 1, "contracts": "nope"})
    newer = SessionRecord(kind=EXPANDED_KIND, version=2, payload={"version": 2})
    with caplog.at_level("WARNING", logger="ptc_plus.session.contract_memory"):
        memory = replay([bad, good, newer])
    assert memory.expanded == {"host:a": "sha256:1"}
    assert len(caplog.records) == 2


def test_the_desk_takes_what_other_threads_handed_in() -> None:
    desk = ContractDesk()
    threads = [threading.Thread(target=desk.expanded, args=(AGENT, [(f"host:t{n}", "sha256:0")])) for n in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    taken = desk.take(AGENT)
    assert sorted(c.identity for c in taken) == sorted(f"host:t{n}" for n in range(20))
    assert desk.take(AGENT) == ()
