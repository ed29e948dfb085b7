"""The journal's records and what a loaded journal says: the tree, the head, volatility, the frontier,
saves, contraction cycles, provenance, and damaged entries (ADR 0081)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptc_plus.runtime.kernel.journal import (
    BindingsRecord,
    Deleted,
    Entered,
    HeadMoved,
    Hidden,
    Invalid,
    Journal,
    Record,
    RecordedCall,
    Settled,
    decode,
    encode,
)
from ptc_plus.runtime.kernel.store import Unreadable


def entered(seq: int, parent: int, *, call_id: str | None = None, bindings: str = "") -> dict[str, Any]:
    return encode(
        Entered(
            seq=seq,
            parent=parent,
            call_id=call_id or f"call-{seq}",
            source=f"x{seq} = {seq}",
            cwd="/work",
            policy="workspace-write",
            network=False,
            bindings=bindings,
            tools=("read_file",),
            drop=(),
            at=1.0,
        )
    )


def settled(
    seq: int,
    *,
    outcome: str = "ok",
    volatile: tuple[str, str] | None = None,
    saves: tuple[str, ...] = (),
    bound: tuple[str, ...] = (),
    referenced: tuple[str, ...] = (),
) -> dict[str, Any]:
    return encode(
        Settled(
            seq=seq,
            outcome=outcome,
            volatile=volatile,
            calls=(),
            bound=bound,
            referenced=referenced,
            saves=saves,
            restore=None,
        )
    )


def cell(seq: int, parent: int, **settled_fields: Any) -> list[dict[str, Any]]:
    return [entered(seq, parent), settled(seq, **settled_fields)]


def head(target: int, cause: str = "restore") -> dict[str, Any]:
    return {"v": 1, "type": "head", "target": target, "cause": cause, "reason": None, "noticed": False}


def chain(count: int) -> list[dict[str, Any]]:
    return [item for seq in range(1, count + 1) for item in cell(seq, seq - 1)]


# -- records -------------------------------------------------------------------------------------

RECORDS: list[Record] = [
    Entered(
        seq=3,
        parent=1,
        call_id="c",
        source="y = await tools.read_file(path='a')",
        cwd="/w",
        policy="read-only",
        network=True,
        bindings="sha256:ab",
        tools=("read_file", "write_file"),
        drop=("z",),
        at=1733011200.5,
    ),
    Settled(
        seq=3,
        outcome="exception",
        volatile=("file-write", "/w/out.txt"),
        calls=(
            RecordedCall(index=1, tool="read_file", arguments={"path": "a"}, status="ok", value={"text": "hi"}),
            RecordedCall(
                index=2,
                tool="read_file",
                arguments={"path": "b"},
                status="error",
                error={"code": "not-found", "message": "no b", "data": {}},
                is_error=True,
            ),
            RecordedCall(index=3, tool="write_file", arguments={"path": "c"}, status="discarded"),
        ),
        bound=("y",),
        referenced=("tools", "y"),
        saves=("before",),
        restore=1,
    ),
    HeadMoved(target=1, cause="contraction", reason=("subprocess", "ls"), noticed=True),
    Deleted(name="before"),
    Hidden(call_ids=("c", "d")),
    BindingsRecord(fingerprint="sha256:ab", modules=(("helpers", "def f():\n    return 1\n"),)),
]


@pytest.mark.parametrize("record", RECORDS, ids=lambda record: type(record).__name__)
def test_every_record_round_trips_and_carries_its_version_and_type(record: Record) -> None:
    import orjson

    item = orjson.loads(orjson.dumps(encode(record)))  # what a store gives back
    assert item["v"] == 1
    assert item["type"] in {"entered", "settled", "head", "deleted", "hidden", "bindings"}
    assert item == encode(record)  # encode is plain JSON already
    assert decode(item) == record


def test_the_wire_shapes_of_reasons_restores_and_modules() -> None:
    settled_item = encode(RECORDS[1])
    assert settled_item["volatile"] == {"kind": "file-write", "detail": "/w/out.txt"}
    assert settled_item["restore"] == {"target": 1}
    assert encode(RECORDS[2])["reason"] == {"kind": "subprocess", "detail": "ls"}
    assert encode(RECORDS[5])["modules"] == [["helpers", "def f():\n    return 1\n"]]


def _variants() -> list[tuple[str, Any]]:
    good = encode(RECORDS[0])
    done = encode(RECORDS[1])
    call = done["calls"][0]
    return [
        ("unknown field", {**good, "extra": 1}),
        ("wrong type", {**good, "seq": "3"}),
        ("a boolean is not an integer", {**good, "parent": False}),
        ("missing field", {key: value for key, value in good.items() if key != "cwd"}),
        ("missing field with a default", {**done, "calls": [{k: v for k, v in call.items() if k != "is_error"}]}),
        ("unknown nested field", {**done, "calls": [{**call, "extra": 1}]}),
        ("unknown call status", {**done, "calls": [{**call, "status": "maybe"}]}),
        ("error without data", {**done, "calls": [{**call, "error": {"code": "x", "message": "y"}}]}),
        ("reason without detail", {**done, "volatile": {"kind": "file-write"}}),
        ("restore as a bare number", {**done, "restore": 1}),
        ("seq below 1", {**good, "seq": 0}),
        ("parent not before seq", {**good, "parent": 3}),
        ("unknown head cause", {**encode(RECORDS[2]), "cause": "whim"}),
        ("module pair of three", {**encode(RECORDS[5]), "modules": [["a", "b", "c"]]}),
        ("string as a list", {**good, "tools": "read_file"}),
        ("no version", {key: value for key, value in good.items() if key != "v"}),
        ("version 2", {**good, "v": 2}),
        ("version true", {**good, "v": True}),
        ("unknown type", {**good, "type": "entred"}),
        ("not an object", [1, 2]),
    ]


@pytest.mark.parametrize(("case", "item"), _variants(), ids=[case for case, _ in _variants()])
def test_a_record_that_is_not_exactly_right_is_invalid_with_a_reason(case: str, item: Any) -> None:
    result = decode(item)
    assert isinstance(result, Invalid), case
    assert result.reason


def test_an_invalid_reason_names_the_field() -> None:
    result = decode({**encode(RECORDS[0]), "extra": 1})
    assert isinstance(result, Invalid)
    assert "extra" in result.reason
    result = decode({**encode(RECORDS[0]), "seq": "3"})
    assert isinstance(result, Invalid)
    assert "seq" in result.reason


# -- the tree and the head -----------------------------------------------------------------------


def test_an_empty_journal() -> None:
    journal = Journal.load([])
    assert (journal.head, journal.next_seq, journal.saves, journal.invalid) == (0, 1, {}, ())
    assert journal.path(0) == ()
    assert journal.frontier(0) == 0
    assert journal.first_volatile(0) is None
    assert not journal.in_contraction_cycle


def test_settled_cells_form_a_chain_whose_last_is_the_head_and_the_frontier() -> None:
    journal = Journal.load(chain(3))
    assert journal.head == 3
    assert [c.seq for c in journal.path(3)] == [1, 2, 3]
    assert all(c.durable and c.volatile is None and c.settled is not None for c in journal.path(3))
    assert journal.frontier(3) == 3
    assert journal.frontier(2) == 2
    assert journal.first_volatile(3) is None
    assert journal.next_seq == 4


def test_a_restore_moves_the_head_back_and_later_cells_branch_from_there() -> None:
    items = [*chain(3), head(1), *cell(4, 1), *cell(5, 4)]
    journal = Journal.load(items)
    assert journal.head == 5
    assert [c.seq for c in journal.path(5)] == [1, 4, 5]  # 2 and 3 are a branch left behind
    assert journal.frontier(5) == 5
    assert [c.seq for c in journal.path(3)] == [1, 2, 3]
    assert journal.next_seq == 6


def test_a_head_record_is_the_head_until_a_cell_enters() -> None:
    journal = Journal.load([*chain(3), head(0)])
    assert journal.head == 0
    assert journal.path(journal.head) == ()
    assert journal.frontier(journal.head) == 0
    assert journal.next_seq == 4  # seqs are never reused, even after going back to the empty kernel


def test_a_cell_that_entered_but_never_settled_is_the_head_and_unconfirmed() -> None:
    journal = Journal.load([*chain(2), entered(3, 2)])
    assert journal.head == 3
    last = journal.path(3)[-1]
    assert last.settled is None and not last.durable
    assert journal.first_volatile(3) is not None
    assert journal.first_volatile(3)[0] == "unconfirmed"  # type: ignore[index]
    assert journal.frontier(3) == 2


def test_an_unconfirmed_cell_is_not_the_head_once_something_later_moves_it() -> None:
    journal = Journal.load([*chain(2), entered(3, 2), head(2, "contraction"), *cell(4, 2)])
    assert journal.head == 4
    assert journal.frontier(4) == 4
    assert journal.first_volatile(4) is None


def test_volatility_is_inherited_along_the_path_and_the_first_reason_wins() -> None:
    items = [
        *cell(1, 0),
        *cell(2, 1, volatile=("file-write", "/w/a")),
        *cell(3, 2, volatile=("socket", "1.2.3.4:80")),
        *cell(4, 3),
    ]
    journal = Journal.load(items)
    assert journal.first_volatile(4) == ("file-write", "/w/a")
    assert journal.first_volatile(1) is None
    assert [c.durable for c in journal.path(4)] == [True, False, False, False]
    assert [c.volatile for c in journal.path(4)][1:] == [("file-write", "/w/a")] * 3
    assert journal.frontier(4) == 1


def test_a_branch_from_before_the_volatile_cell_is_durable_again() -> None:
    items = [*cell(1, 0), *cell(2, 1, volatile=("subprocess", "ls")), head(1), *cell(3, 1)]
    journal = Journal.load(items)
    assert journal.first_volatile(3) is None
    assert journal.frontier(3) == 3


@pytest.mark.parametrize(("outcome", "frontier"), [("ok", 3), ("exception", 3), ("timeout", 1), ("worker-exit", 1)])
def test_only_cells_that_ran_to_an_end_or_raised_are_replayable(outcome: str, frontier: int) -> None:
    journal = Journal.load([*cell(1, 0), *cell(2, 1, outcome=outcome), *cell(3, 2)])
    assert journal.frontier(3) == frontier


def test_a_cell_with_bindings_is_past_the_frontier_only_with_its_bindings_recorded() -> None:
    without = [*cell(1, 0), entered(2, 1, bindings="sha256:f"), settled(2), *cell(3, 2)]
    assert Journal.load(without).frontier(3) == 1
    assert Journal.load(without).bindings_source("sha256:f") is None
    modules = (("helpers", "X = 1\n"),)
    record = encode(BindingsRecord(fingerprint="sha256:f", modules=modules))
    journal = Journal.load([record, *without])
    assert journal.frontier(3) == 3
    assert journal.bindings_source("sha256:f") == modules
    assert journal.bindings_source("sha256:other") is None


# -- saves ---------------------------------------------------------------------------------------


def test_saves_count_on_durable_cells_and_deleted_names_are_gone() -> None:
    items = [
        *cell(1, 0, saves=("a",)),
        *cell(2, 1, saves=("b", "c")),
        encode(Deleted(name="b")),
        *cell(3, 2, saves=("c",)),
    ]
    assert Journal.load(items).saves == {"a": 1, "c": 3}


def test_a_save_again_after_a_delete_counts() -> None:
    items = [*cell(1, 0, saves=("a",)), encode(Deleted(name="a")), *cell(2, 1, saves=("a",))]
    assert Journal.load(items).saves == {"a": 2}


def test_a_save_on_a_cell_that_is_not_durable_is_dropped_and_forgets_the_name() -> None:
    items = [
        *cell(1, 0, saves=("a", "keep")),
        *cell(2, 1, volatile=("ctypes", "dlopen")),
        *cell(3, 2, saves=("a", "new")),  # volatile by inheritance
    ]
    assert Journal.load(items).saves == {"keep": 1}


def test_a_save_whose_settled_record_is_damaged_is_dropped() -> None:
    broken = {**settled(2, saves=("s",)), "extra": True}
    journal = Journal.load([*cell(1, 0), entered(2, 1), broken])
    assert journal.saves == {}
    assert len(journal.invalid) == 1


# -- contraction cycles --------------------------------------------------------------------------


def test_a_contraction_starts_a_cycle_and_a_cell_started_without_one_ends_it() -> None:
    base = [*chain(2), entered(3, 2)]
    assert not Journal.load(base).in_contraction_cycle
    contracted = [*base, head(2, "contraction")]
    assert Journal.load(contracted).in_contraction_cycle
    # The cell that ran right after the contraction continues the cycle, durable or not ...
    after = [*contracted, *cell(4, 2)]
    assert Journal.load(after).in_contraction_cycle
    # ... the next one, started on verified state with no contraction before it, ends it.
    assert not Journal.load([*after, *cell(5, 4)]).in_contraction_cycle


def test_consecutive_contractions_stay_one_cycle() -> None:
    items = [*chain(2), entered(3, 2), head(2, "contraction"), *cell(4, 2, volatile=("socket", "x"))]
    assert Journal.load(items).in_contraction_cycle
    assert Journal.load([*items, head(2, "contraction")]).in_contraction_cycle


def test_a_restore_is_not_a_contraction() -> None:
    assert not Journal.load([*chain(2), head(1, "restore")]).in_contraction_cycle


# -- provenance ----------------------------------------------------------------------------------


def test_a_hidden_record_marks_the_cells_of_its_calls() -> None:
    items = [
        *cell(1, 0, bound=("a",), referenced=("a", "tools")),
        *cell(2, 1, bound=("b",), referenced=("a", "b")),  # reads a: b depends on the hidden cell
        *cell(3, 2, bound=("c",), referenced=("c",)),  # independent
        *cell(4, 3, bound=("d",), referenced=("b", "d")),  # reads b: transitively tainted
        encode(Hidden(call_ids=("call-1",))),
    ]
    journal = Journal.load(items)
    assert [c.hidden for c in journal.path(4)] == [True, False, False, False]
    assert journal.frontier(4) == 4  # hiding a call drops names, it does not make history unprovable


def test_hidden_cells_off_the_path_leave_the_path_visible() -> None:
    items = [*cell(1, 0, bound=("a",), referenced=("a",)), head(0), *cell(2, 0, bound=("b",), referenced=("b",))]
    items.append(encode(Hidden(call_ids=("call-1", "unknown-call"))))
    journal = Journal.load(items)
    assert journal.cells[1].hidden
    assert [c.hidden for c in journal.path(2)] == [False]


# -- damaged journals ----------------------------------------------------------------------------


def test_unreadable_items_are_skipped_and_counted_with_their_line() -> None:
    items: list[object] = [*chain(2), Unreadable("line 5 is torn (no line end)")]
    journal = Journal.load(items)
    assert journal.head == 2
    assert journal.frontier(2) == 2
    assert journal.invalid == ("line 5: line 5 is torn (no line end)",)


def test_a_garbage_line_in_the_middle_does_not_hide_what_follows() -> None:
    items: list[object] = [*cell(1, 0), Unreadable("line 3 is not JSON"), *cell(2, 1)]
    journal = Journal.load(items)
    assert journal.head == 2
    assert journal.frontier(2) == 2
    assert len(journal.invalid) == 1


def test_a_cell_whose_settled_record_is_unreadable_is_unconfirmed_and_blocks_its_descendants() -> None:
    items: list[object] = [*cell(1, 0), entered(2, 1), Unreadable("garbage"), *cell(3, 2)]
    journal = Journal.load(items)
    assert journal.head == 3
    assert journal.frontier(3) == 1
    assert journal.first_volatile(3) is not None
    assert journal.first_volatile(3)[0] == "unconfirmed"  # type: ignore[index]
    assert not journal.path(3)[-1].durable


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda item: {**item, "surprise": 1}, id="unknown-field"),
        pytest.param(lambda item: {**item, "outcome": 7}, id="wrong-type"),
        pytest.param(lambda item: None, id="missing-settled"),
    ],
)
def test_a_damaged_settled_record_keeps_the_cell_and_everything_after_it_out_of_the_frontier(damage: Any) -> None:
    items: list[Any] = chain(4)
    replaced = damage(items[3])  # settled(2)
    if replaced is None:
        del items[3]
    else:
        items[3] = replaced
    journal = Journal.load(items)
    assert journal.frontier(4) == 1
    assert [c.durable for c in journal.path(4)] == [True, False, False, False]
    assert len(journal.invalid) == (0 if replaced is None else 1)


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda item: Unreadable("torn"), id="unreadable"),
        pytest.param(lambda item: {**item, "surprise": 1}, id="unknown-field"),
        pytest.param(lambda item: {**item, "parent": "1"}, id="wrong-type"),
    ],
)
def test_a_cell_whose_entered_record_is_lost_takes_its_descendants_out_of_the_frontier(damage: Any) -> None:
    items: list[Any] = chain(4)
    items[2] = damage(items[2])  # entered(2)
    journal = Journal.load(items)
    assert journal.head == 4
    assert [c.seq for c in journal.path(4)] == [3, 4]  # the walk stops at the missing cell
    assert journal.frontier(4) == 0
    assert journal.first_volatile(4) is not None
    assert journal.first_volatile(4)[0] == "corrupt"  # type: ignore[index]
    assert journal.frontier(1) == 1
    # the lost cell's settled record names a cell that never entered: skipped and counted as well
    assert len(journal.invalid) == 2
    assert journal.next_seq == 5


def test_a_lost_entered_record_of_the_last_cell_leaves_a_head_with_nothing_provable() -> None:
    items: list[Any] = [*chain(2), Unreadable("torn"), settled(3)]
    journal = Journal.load(items)
    assert journal.head == 3
    assert journal.path(3) == ()
    assert journal.frontier(3) == 0
    assert journal.first_volatile(3) == ("corrupt", "cell 3 is missing from the journal")
    assert journal.next_seq == 4


def test_a_lost_seq_is_never_handed_out_again() -> None:
    journal = Journal.load([*chain(2), {**entered(3, 2), "surprise": 1}])
    assert journal.head == 2
    assert journal.next_seq == 4


def test_a_second_entered_or_settled_for_the_same_cell_is_invalid() -> None:
    items = [*chain(2), entered(2, 1), settled(1, saves=("late",))]
    journal = Journal.load(items)
    assert len(journal.invalid) == 2
    assert journal.invalid[0].startswith("line 5: entered: cell 2 entered twice")
    assert journal.saves == {}
    assert journal.frontier(2) == 2


def test_invalid_reasons_come_in_journal_order() -> None:
    items: list[Any] = [Unreadable("first"), *cell(1, 0), settled(1), Unreadable("last")]
    journal = Journal.load(items)
    assert [reason.split(":")[0] for reason in journal.invalid] == ["line 1", "line 4", "line 5"]


# -- never raises --------------------------------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


def _mutated(record: Record) -> st.SearchStrategy[dict[str, Any]]:
    item = encode(record)
    return st.dictionaries(st.sampled_from(sorted(item)), JSON, max_size=3).map(lambda changes: {**item, **changes})


@settings(max_examples=300, deadline=None)
@given(item=st.one_of(JSON, *(_mutated(record) for record in RECORDS)))
def test_decoding_any_json_gives_a_record_or_invalid_and_loading_never_raises(item: Any) -> None:
    result = decode(item)
    assert isinstance(result, Invalid | Entered | Settled | HeadMoved | Deleted | Hidden | BindingsRecord)
    journal = Journal.load([*chain(2), item, *cell(3, 2)])
    assert journal.frontier(journal.head) in {0, *(c.seq for c in journal.path(journal.head))}
