"""The REPL kernel's journal: its records, their encoding, and what a loaded journal says (ADR 0081).

A session's journal is an append-only sequence of records, each a JSON object with ``"v": 1`` and a
``"type"``:

- ``entered`` — a cell entered the kernel (tentative): ``seq`` ≥ 1, ``parent`` (0: the empty kernel,
  else an earlier cell), the ``run_code`` ``call_id``, ``source``, the ``cwd``, ``policy`` and ``network``
  it ran with, the user ``bindings`` fingerprint ("": none), the ``tools`` it saw, and ``at`` (epoch s).
- ``settled`` — the cell's confirmed result: ``outcome`` ("ok" or an outcome kind), the first OS-touching
  event (``volatile``), its nested ``calls`` in submission order, the names it ``bound`` and
  ``referenced``, the ``saves`` it made and the ``restore`` it did.
- ``head`` — the head moved to ``target`` because of a ``restore`` or a ``contraction`` (recovery).
- ``deleted`` — a saved name was deleted.
- ``hidden`` — these ``run_code`` calls left the model-visible surface (compaction).
- ``bindings`` — the modules behind a bindings fingerprint.

Cells form a tree by their parent pointers: a restore moves the head back and the next cell branches
from there. :meth:`Journal.load` decodes every item on its own; an unreadable or invalid item is skipped
and listed in :attr:`Journal.invalid`, and the cells it belonged to simply lack that record, which makes
them (and everything after them) not durable. Nothing here touches the disk: see
:mod:`ptc_plus.runtime.kernel.store`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, TypeAlias

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from cattrs.v import format_exception

from hookspecs import JSONObject, JSONValue
from hookspecs.serialization import Rejected
from hookspecs.serialization import converter as _strict
from ptc_plus.runtime.kernel.store import Unreadable
from ptc_plus.runtime.outcome import outcome_kinds

VERSION = 1

REPLAYABLE = frozenset({"ok", *(str(kind) for kind in outcome_kinds("replayable"))})
"""Outcomes of a cell that ran to its end in a worker that lived on (it returned, raised, or returned a value the
host refused): a replay with the recorded tool results ends the same way (the outcome kinds' ``replayable``)."""

UNCONFIRMED = "unconfirmed"
"""Volatility kind of a cell that entered the kernel but whose settled record is missing or unreadable."""

CORRUPT = "corrupt"
"""Volatility kind of a cell whose ancestor is missing from the journal (its entered record was unreadable)."""


def _at_least(low: int) -> Callable[[Any, attrs.Attribute[int], int], None]:
    def check(_: Any, attribute: attrs.Attribute[int], value: int) -> None:
        if value < low:
            raise ValueError(f"{attribute.name} must be at least {low}, got {value}")

    return check


def _error_shape(_: Any, attribute: attrs.Attribute[Any], value: dict[str, Any] | None) -> None:
    if value is None:
        return
    if not isinstance(value, dict) or set(value) != {"code", "message", "data"}:
        raise ValueError(f"{attribute.name} must be an object with exactly code, message and data")
    if not isinstance(value["code"], str) or not isinstance(value["message"], str):
        raise ValueError(f"{attribute.name}.code and {attribute.name}.message must be strings")
    if not isinstance(value["data"], dict):
        raise ValueError(f"{attribute.name}.data must be an object")


Reason: TypeAlias = tuple[str, str]
"""(kind, detail): why a cell's state cannot be rebuilt by replay. Encoded as ``{"kind", "detail"}``."""


@attrs.frozen(kw_only=True)
class RecordedCall:
    """One nested call of a cell, as a replay answers it (``discarded``: it may have had an effect, never
    answered from the journal)."""

    index: int = attrs.field(validator=_at_least(1))
    """1-based submission order within the cell."""
    tool: str
    arguments: JSONObject
    """Canonical: keys sorted at every level."""
    status: Literal["ok", "error", "discarded"]
    value: JSONValue = None
    error: dict[str, Any] | None = attrs.field(default=None, validator=_error_shape)
    """``{"code", "message", "data"}`` when the tool failed."""
    is_error: bool = False


@attrs.frozen(kw_only=True)
class Entered:
    seq: int = attrs.field(validator=_at_least(1))
    parent: int = attrs.field(validator=_at_least(0))
    call_id: str
    source: str
    cwd: str
    policy: str
    network: bool
    bindings: str
    """Fingerprint of the user bindings loaded before the cell ("": none)."""
    tools: tuple[str, ...]
    drop: tuple[str, ...]
    """Names deleted from the namespace before the cell (provenance), so a replay deletes the same."""
    at: float

    def __attrs_post_init__(self) -> None:
        # Parents precede their children: the tree cannot hold a cycle, and every walk to the root ends.
        if self.parent >= self.seq:
            raise ValueError(f"parent {self.parent} must precede seq {self.seq}")


@attrs.frozen(kw_only=True)
class Settled:
    seq: int = attrs.field(validator=_at_least(1))
    outcome: str
    """``"ok"`` or an outcome kind (``exception``, ``timeout``, ...)."""
    volatile: Reason | None
    """The cell's own first OS-touching event (or another reason it cannot be replayed)."""
    calls: tuple[RecordedCall, ...]
    bound: tuple[str, ...]
    referenced: tuple[str, ...]
    saves: tuple[str, ...]
    restore: int | None = attrs.field(validator=attrs.validators.optional(_at_least(0)))
    """The node a ``repl.restore`` in the cell went back to. Encoded as ``{"target": n}``."""


@attrs.frozen(kw_only=True)
class HeadMoved:
    """A ``head`` record."""

    target: int = attrs.field(validator=_at_least(0))
    cause: Literal["restore", "contraction"]
    reason: Reason | None
    noticed: bool


@attrs.frozen(kw_only=True)
class Deleted:
    name: str


@attrs.frozen(kw_only=True)
class Hidden:
    call_ids: tuple[str, ...]


@attrs.frozen(kw_only=True)
class BindingsRecord:
    """A ``bindings`` record."""

    fingerprint: str
    modules: tuple[tuple[str, str], ...]
    """``(name, source)`` pairs, exec'd in order."""


Record: TypeAlias = Entered | Settled | HeadMoved | Deleted | Hidden | BindingsRecord

_TYPES: Mapping[str, type[Record]] = {
    "entered": Entered,
    "settled": Settled,
    "head": HeadMoved,
    "deleted": Deleted,
    "hidden": Hidden,
    "bindings": BindingsRecord,
}
_NAMES: Mapping[type[Record], str] = {kind: name for name, kind in _TYPES.items()}


@attrs.frozen
class Invalid:
    """An item :func:`decode` refused, with why."""

    reason: str


def _reason_in(value: Any, _: Any) -> Reason | None:
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != {"kind", "detail"}:
        raise ValueError("must be null or an object with exactly kind and detail")
    if not isinstance(value["kind"], str) or not isinstance(value["detail"], str):
        raise ValueError("kind and detail must be strings")
    return (value["kind"], value["detail"])


def _reason_out(value: Reason | None) -> dict[str, str] | None:
    return None if value is None else {"kind": value[0], "detail": value[1]}


def _restore_in(value: Any, _: Any) -> int | None:
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != {"target"} or type(value["target"]) is not int:
        raise ValueError("must be null or an object with exactly an integer target")
    return int(value["target"])


def _restore_out(value: int | None) -> dict[str, int] | None:
    return None if value is None else {"target": value}


_REASON = override(struct_hook=_reason_in, unstruct_hook=_reason_out)
_OVERRIDES: Mapping[type[Any], Mapping[str, Any]] = {
    Settled: {"volatile": _REASON, "restore": override(struct_hook=_restore_in, unstruct_hook=_restore_out)},
    HeadMoved: {"reason": _REASON},
    BindingsRecord: {"modules": override(unstruct_hook=lambda modules: [list(module) for module in modules])},
}


def _journal_converter() -> cattrs.Converter:
    # The shared strict rules (no coercion, unknown keys refused), plus: every field present, defaults
    # included, so a record missing a field is invalid rather than silently filled in.
    converter = _strict.copy()
    for kind in (RecordedCall, *_TYPES.values()):
        attrs.resolve_types(kind)
        overrides = _OVERRIDES.get(kind, {})
        converter.register_structure_hook(kind, _complete(kind, converter, overrides))
        converter.register_unstructure_hook(kind, make_dict_unstructure_fn(kind, converter, **overrides))
    return converter


def _complete(kind: type[Any], converter: cattrs.Converter, overrides: Mapping[str, Any]) -> Callable[[Any, Any], Any]:
    structure = make_dict_structure_fn(kind, converter, _cattrs_forbid_extra_keys=True, **overrides)
    names = {field.name for field in attrs.fields(kind)}

    def hook(value: Any, _: Any) -> Any:
        if not isinstance(value, dict):
            raise Rejected("type", expected="object")
        if missing := names - value.keys():
            raise ValueError(f"missing field(s): {', '.join(sorted(missing))}")
        return structure(value, kind)

    return hook


_converter = _journal_converter()


def encode(record: Record) -> dict[str, Any]:
    """The JSON object of ``record`` (with ``"v"`` and ``"type"``), as a store appends it."""
    return {"v": VERSION, "type": _NAMES[type(record)], **_converter.unstructure(record)}


def _problem(exc: BaseException, kind: type | None) -> str:
    # Our own checks say what is wrong; cattrs' default would only say "invalid value".
    if type(exc) is ValueError and exc.args and kind is None:
        return str(exc)
    return format_exception(exc, kind)


_RECORDS = (Entered, Settled, HeadMoved, Deleted, Hidden, BindingsRecord)


def decode(item: object) -> Record | Invalid:
    """One decoded JSON value as a record, or :class:`Invalid` with the reason (never raises). A record
    passes through: a live kernel keeps the records it read and appended instead of reading them again."""
    if isinstance(item, _RECORDS):
        return item
    if not isinstance(item, dict):
        return Invalid("not a JSON object")
    version = item.get("v")
    if type(version) is not int or version != VERSION:
        return Invalid(f"unknown version {version!r}")
    name = item.get("type")
    kind = _TYPES.get(name) if isinstance(name, str) else None
    if kind is None:
        return Invalid(f"unknown record type {name!r}")
    fields = {key: value for key, value in item.items() if key not in ("v", "type")}
    try:
        return _converter.structure(fields, kind)
    except cattrs.BaseValidationError as exc:
        return Invalid(f"{name}: " + "; ".join(cattrs.transform_error(exc, format_exception=_problem)))
    except (ValueError, TypeError) as exc:  # an attrs validator, or a hook outside cattrs' grouping
        return Invalid(f"{name}: {exc}")


@attrs.frozen(kw_only=True)
class Cell:
    """One cell of the tree, with what the whole journal says about it."""

    entered: Entered
    settled: Settled | None
    """``None``: executed but unconfirmed (missing or unreadable)."""
    volatile: tuple[str, str] | None
    """(kind, detail) of the first volatile cell on its path (itself included), or ``None``."""
    durable: bool
    """Settled and not volatile: its state is rebuilt by replaying its path."""
    hidden: bool
    """Its ``run_code`` call left the model-visible surface."""

    @property
    def seq(self) -> int:
        return self.entered.seq


@attrs.frozen(kw_only=True)
class Journal:
    """What a session's journal says. Build it with :meth:`load`; every query is pure."""

    cells: Mapping[int, Cell]
    head: int
    """The node the kernel's state corresponds to: the last settled cell, head target, or cell that entered
    (then unconfirmed), in journal order; 0: the empty kernel. It may name a cell whose entered record is
    unreadable: then its path is empty, its frontier 0 and it is volatile (``corrupt``)."""
    next_seq: int
    """The ``seq`` of the next cell: above every seq the journal mentions, unreadable entries included."""
    in_contraction_cycle: bool
    """The latest cell started right after a contraction (or a contraction is the latest event): a further
    contraction now continues that run of consecutive contractions, whose model notice was given once."""
    unacknowledged: tuple[str, ...] = ()
    """The :attr:`invalid` reasons after the last contraction: damage no recovery has answered yet. Recovery
    then starts from an empty kernel (nothing after unknown damage is provable) and journals a contraction,
    which acknowledges it, so the next cold start does not meet the same damage."""
    invalid: tuple[str, ...]
    """Why each skipped item was skipped (``"line N: reason"``, in journal order): unreadable, invalid, or
    contradicting an earlier record. Its length is the count."""
    _saves: tuple[tuple[str, int], ...]
    _bindings: Mapping[str, tuple[tuple[str, str], ...]]

    @property
    def saves(self) -> dict[str, int]:
        """Saved name → cell seq. A save counts only while its cell is durable; a deleted name is gone, and
        a later non-durable save of a name removes the earlier one (the name meant the newer state)."""
        return dict(self._saves)

    @classmethod
    def load(cls, items: Iterable[object]) -> Journal:
        """The journal of ``items`` (decoded JSON objects or :class:`Unreadable`, in journal order)."""
        return _load(items)

    def path(self, seq: int) -> tuple[Cell, ...]:
        """Cells from the root to ``seq`` (inclusive) following parents; stops above at a missing ancestor;
        ``()`` for 0 or an unknown seq."""
        cells: list[Cell] = []
        cell = self.cells.get(seq)
        while cell is not None:
            cells.append(cell)
            cell = self.cells.get(cell.entered.parent)
        return tuple(reversed(cells))

    def first_volatile(self, seq: int) -> tuple[str, str] | None:
        """(kind, detail) of the first volatile cell on the path to ``seq``; ``None``: all provable."""
        if seq == 0:
            return None
        cell = self.cells.get(seq)
        if cell is None:
            return (CORRUPT, f"cell {seq} is missing from the journal")
        return cell.volatile

    def frontier(self, seq: int) -> int:
        """The largest node on the path to ``seq`` up to which every cell is settled, durable, replayable
        (outcome ``ok`` or ``exception``) and has its bindings recorded; 0 when none."""
        frontier = 0
        for cell in self.path(seq):
            settled = cell.settled
            if not cell.durable or settled is None or settled.outcome not in REPLAYABLE:
                break
            if cell.entered.bindings and cell.entered.bindings not in self._bindings:
                break
            frontier = cell.seq
        return frontier

    def bindings_source(self, fingerprint: str) -> tuple[tuple[str, str], ...] | None:
        """The ``(name, source)`` modules recorded for ``fingerprint`` (the latest record), or ``None``."""
        return self._bindings.get(fingerprint)


def _load(items: Iterable[object]) -> Journal:
    records: list[tuple[int, Record]] = []
    invalid: list[tuple[int, str]] = []
    seqs = [0]
    for line, item in enumerate(items, start=1):
        decoded = Invalid(item.reason) if isinstance(item, Unreadable) else decode(item)
        if isinstance(decoded, Invalid):
            invalid.append((line, decoded.reason))
            # A cell whose entered record is unreadable may still be named: never hand out its seq again.
            if isinstance(item, dict) and type(item.get("seq")) is int:
                seqs.append(item["seq"])
            continue
        records.append((line, decoded))
        if isinstance(decoded, Entered | Settled):
            seqs.append(decoded.seq)
        elif isinstance(decoded, HeadMoved):
            seqs.append(decoded.target)

    entered: dict[int, Entered] = {}
    settled: dict[int, Settled] = {}
    hidden_ids: set[str] = set()
    bindings: dict[str, tuple[tuple[str, str], ...]] = {}
    kept: list[tuple[int, Record]] = []
    for line, record in records:
        if isinstance(record, Entered):
            if record.seq in entered:
                invalid.append((line, f"entered: cell {record.seq} entered twice"))
                continue
            entered[record.seq] = record
        elif isinstance(record, Settled):
            if record.seq in settled:
                invalid.append((line, f"settled: cell {record.seq} settled twice"))
                continue
            settled[record.seq] = record
        elif isinstance(record, Hidden):
            hidden_ids.update(record.call_ids)
        elif isinstance(record, BindingsRecord):
            bindings[record.fingerprint] = record.modules
        kept.append((line, record))

    cells: dict[int, Cell] = {}
    for seq in sorted(entered):  # parents precede children, so a parent is always built first
        cells[seq] = _cell(entered[seq], settled.get(seq), cells, hidden_ids)

    head = 0
    acknowledged = 0
    cycle = pending = False
    saves: dict[str, int] = {}
    for line, record in kept:
        if isinstance(record, Entered):
            head = record.seq
            # A cell that started on a contracted kernel continues the cycle; one that started without
            # a contraction before it ran on verified state and ends it.
            cycle, pending = pending, False
        elif isinstance(record, Settled):
            head = record.seq
            cell = cells.get(record.seq)
            if cell is None:
                invalid.append((line, f"settled: cell {record.seq} never entered (or its entry is unreadable)"))
                continue
            for name in record.saves:
                if cell.durable:
                    saves[name] = record.seq
                else:
                    saves.pop(name, None)
        elif isinstance(record, HeadMoved):
            head = record.target
            if record.cause == "contraction":
                pending = True
                acknowledged = line
        elif isinstance(record, Deleted):
            saves.pop(record.name, None)

    return Journal(
        cells=cells,
        head=head,
        next_seq=max(seqs) + 1,
        in_contraction_cycle=cycle or pending,
        invalid=tuple(f"line {line}: {reason}" for line, reason in sorted(invalid)),
        unacknowledged=tuple(f"line {line}: {reason}" for line, reason in sorted(invalid) if line > acknowledged),
        saves=tuple(saves.items()),
        bindings=bindings,
    )


def _cell(entered: Entered, settled: Settled | None, cells: Mapping[int, Cell], hidden: set[str]) -> Cell:
    inherited: tuple[str, str] | None = None
    if entered.parent:
        parent = cells.get(entered.parent)
        inherited = (
            (CORRUPT, f"cell {entered.parent} is missing from the journal") if parent is None else parent.volatile
        )
    own: tuple[str, str] | None = None
    if settled is None:
        own = (UNCONFIRMED, f"cell {entered.seq} entered the kernel but its result was never confirmed")
    else:
        own = settled.volatile
    volatile = inherited or own
    return Cell(
        entered=entered,
        settled=settled,
        volatile=volatile,
        durable=settled is not None and volatile is None,
        hidden=entered.call_id in hidden,
    )
