"""The statistics file format: its versioned types, the v0 → v1 step, decoding and encoding.

Version 2 (``statistics.json``; version 1 is the same without ``learned``, ADR 0102)::

    {"version": 2, "next_sequence": 42,
     "families": [{"key": "<16 hex>", "sequence": 40, "plan_config_revision": "sha256:..."}, ...],
     "retired": ["<16 hex>", ...],
     "capabilities": [{"identity": "host:read_file", "revisions": [
         {"revision": "sha256:...", "schema_revision": "shape:...",
          "available": [3, 40], "used": [40], "on_demand": [3],
          "learned": {"shape": {"type": "object", ...}, "since": "2026-12-01",
                      "families": [40], "results": [7]}}]}]}

- ``key`` is a digest of the host's family id (the id itself is not kept).
- ``sequence`` is the family's eligibility sequence number: given once, when the
  family first settles, kept when it is revised; ``next_sequence`` is the next one.
- Per capability and contract revision: the sequence numbers of the families
  where it was available, those of them that used it, and those where it was
  offered on demand (the rest: in full).
- ``learned`` (``null`` unless shapes were learned): the output shape of the revision's results, the union
  over families (:mod:`.shapes`: types and field names, never a value), since when, and how many results each
  retained family contributed.
- ``retired`` lists families whose samples were all displaced by newer ones
  (oldest first, bounded): recording one of them again changes nothing, so a
  long-resumed family cannot jump to the front of the window.

Version 0 (written by no release of ours; the fixture of the migration
framework, and the shape a naive first store would have had): the families
in the order they settled, each with its raw id and a map of capability to
``{"revision", "used"}``; no sequence numbers, no disclosure, no bound.
It migrates to version 1 with sequence numbers in list order, every sample
recorded as ``full`` and with no schema revision (ADR 0066).

Everything is decoded with the one strict converter (ADR 0058), then checked
for consistency (ordered, used ⊆ available, every sequence a known family);
any failure is a corrupt store, never a partial read.
"""

from __future__ import annotations

import hashlib
import itertools
import operator
import re
from typing import Any, NewType

import attrs
import cattrs
import orjson

from hookspecs.serialization import Rejected, canonical_bytes, converter, structure
from ptc_plus.migration import Migrations
from ptc_plus.statistics.shapes import NotAShape
from ptc_plus.statistics.shapes import check as check_shape

_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")

VERSION = 2

Sequences = NewType("Sequences", tuple[int, ...])
"""Eligibility sequence numbers (ascending). Its own type so a store of 200,000 numbers is checked in one pass
instead of one converter hook per number; the rule is the converter's: integers only, ``true`` is not one."""


def _sequences(value: Any, _: Any) -> Sequences:
    if type(value) is not list or not set(map(type, value)) <= {int}:  # exact types: bool is not int
        raise Rejected("type", expected="array-of-integers")
    return Sequences(tuple(value))


converter.register_structure_hook(Sequences, _sequences)


@attrs.frozen(kw_only=True)
class FamilyRecord:
    key: str
    sequence: int
    plan_config_revision: str


@attrs.frozen(kw_only=True)
class LearnedRecord:
    """The output shape learned over the results of one contract revision (ADR 0102): the union of the families'
    shapes, the day the first was recorded, and per retained family (its sequence number) how many results."""

    shape: dict[str, Any]
    since: str
    families: Sequences
    results: Sequences
    """``results[i]`` results came from family ``families[i]``."""


@attrs.frozen(kw_only=True)
class RevisionRecord:
    revision: str
    schema_revision: str
    available: Sequences
    used: Sequences
    on_demand: Sequences
    learned: LearnedRecord | None = None


@attrs.frozen(kw_only=True)
class CapabilityRecord:
    identity: str
    revisions: tuple[RevisionRecord, ...]


@attrs.frozen(kw_only=True)
class StatisticsFile:
    """The whole store, version 1."""

    version: int
    next_sequence: int
    families: tuple[FamilyRecord, ...]
    retired: tuple[str, ...]
    capabilities: tuple[CapabilityRecord, ...]


EMPTY = StatisticsFile(version=VERSION, next_sequence=1, families=(), retired=(), capabilities=())


def family_key(family_id: str) -> str:
    """The key a family is stored under: a digest of its id (16 hex digits)."""
    return hashlib.blake2b(family_id.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def _v0_to_v1(data: dict[str, Any]) -> dict[str, Any]:
    order: list[str] = []
    latest: dict[str, dict[str, Any]] = {}
    for family in data["families"]:
        family_id = family["family_id"]
        if not isinstance(family_id, str) or not isinstance(family["capabilities"], dict):
            raise TypeError("family_id must be a string and capabilities an object")
        if family_id not in latest:
            order.append(family_id)
        latest[family_id] = family  # v0 appended a resumed family again: the later entry is its revision
    families = []
    revisions: dict[tuple[str, str], dict[str, list[int]]] = {}
    for sequence, family_id in enumerate(order, start=1):
        family = latest[family_id]
        families.append(
            {"key": family_key(family_id), "sequence": sequence, "plan_config_revision": family["config_revision"]}
        )
        for identity, evidence in family["capabilities"].items():
            record = revisions.setdefault((identity, evidence["revision"]), {"available": [], "used": []})
            record["available"].append(sequence)
            if evidence["used"] is True:
                record["used"].append(sequence)
    capabilities: dict[str, list[dict[str, Any]]] = {}
    for (identity, revision), record in sorted(revisions.items()):
        capabilities.setdefault(identity, []).append(
            {"revision": revision, "schema_revision": "", "on_demand": [], **record}
        )
    return {
        "next_sequence": len(order) + 1,
        "families": families,
        "retired": [],
        "capabilities": [{"identity": i, "revisions": r} for i, r in sorted(capabilities.items())],
    }


def _v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Version 2 only adds ``learned`` to a revision (ADR 0102): a version-1 store has learned nothing."""
    return {key: value for key, value in data.items() if key != "version"}


MIGRATIONS = Migrations(current=VERSION, steps={0: _v0_to_v1, 1: _v1_to_v2})


class Inconsistent(ValueError):
    """Decoded, but not a state the store can be in."""


def decode(data: dict[str, Any]) -> StatisticsFile:
    """A version-1 payload as :class:`StatisticsFile`.

    :raises cattrs.BaseValidationError: wrong shape, types or unknown keys.
    :raises Inconsistent: the content contradicts itself.
    """
    payload = structure(data, StatisticsFile)
    check(payload)
    return payload


def check(payload: StatisticsFile) -> None:
    """:raises Inconsistent: with the first contradiction found."""
    if payload.version != VERSION:
        raise Inconsistent(f"version {payload.version} is not {VERSION}")
    sequences = [family.sequence for family in payload.families]
    if sequences != sorted(set(sequences)) or (sequences and (sequences[0] < 1)):
        raise Inconsistent("families are not in strictly increasing sequence order")
    if sequences and sequences[-1] >= payload.next_sequence:
        raise Inconsistent(f"sequence {sequences[-1]} is not below next_sequence {payload.next_sequence}")
    keys = {family.key for family in payload.families}
    if len(keys) != len(payload.families) or keys & set(payload.retired):
        raise Inconsistent("a family key is repeated")
    known = set(sequences)
    identities = [capability.identity for capability in payload.capabilities]
    if identities != sorted(set(identities)):
        raise Inconsistent("capabilities are not sorted by identity or repeat one")
    # A store holds some 2,000,000 numbers and is read at every session start, and most of its lists repeat
    # (capabilities available in the same families): each distinct list is checked once per call.
    good_available: set[Sequences] = set()
    good_order: set[Sequences] = set()
    members_of: dict[Sequences, set[int]] = {}
    for capability in payload.capabilities:
        seen: set[int] = set()
        several = len(capability.revisions) > 1
        for record in capability.revisions:
            available = record.available
            if available not in good_available:
                if not available or not _increasing(available):
                    raise Inconsistent(f"{capability.identity}: available is empty or not strictly increasing")
                if not known.issuperset(available):
                    raise Inconsistent(f"{capability.identity}: a sequence is unknown or counted twice")
                good_available.add(available)
            if several:
                if not seen.isdisjoint(available):
                    raise Inconsistent(f"{capability.identity}: a sequence is unknown or counted twice")
                seen.update(available)
            for name, subset in (("used", record.used), ("on_demand", record.on_demand)):
                if not subset or subset == available:
                    continue
                if subset not in good_order:
                    if not _increasing(subset):
                        raise Inconsistent(f"{capability.identity}: {name} is not an ordered subset of available")
                    good_order.add(subset)
                members = members_of.get(available)
                if members is None:
                    members = members_of[available] = set(available)
                if not members.issuperset(subset):
                    raise Inconsistent(f"{capability.identity}: {name} is not an ordered subset of available")
            if record.learned is not None:
                _check_learned(capability.identity, record.learned, record.available)


def _check_learned(identity: str, learned: LearnedRecord, available: Sequences) -> None:
    try:
        check_shape(learned.shape)
    except NotAShape as error:
        raise Inconsistent(f"{identity}: the learned shape is not one ({error})") from None
    if not _DAY.fullmatch(learned.since):
        raise Inconsistent(f"{identity}: learned since {learned.since!r} is not a day")
    if len(learned.families) != len(learned.results) or not _increasing(learned.families):
        raise Inconsistent(f"{identity}: learned families and results do not pair up")
    if not set(available).issuperset(learned.families) or any(n < 1 for n in learned.results):
        raise Inconsistent(f"{identity}: learned from a family where it was not available")


def _increasing(sequences: Sequences) -> bool:
    """Strictly increasing (for integers, the same as equal to ``sorted(set(sequences))``)."""
    return all(map(operator.lt, sequences, itertools.islice(sequences, 1, None)))


def encode(payload: StatisticsFile) -> bytes:
    """Canonical bytes: equal stores, identical files."""
    return canonical_bytes(payload)


def parse(raw: bytes) -> dict[str, Any]:
    """The JSON object in ``raw``.

    :raises orjson.JSONDecodeError: not JSON (truncated, garbage).
    :raises Inconsistent: JSON, but not an object.
    """
    data = orjson.loads(raw)
    if not isinstance(data, dict):
        raise Inconsistent(f"the top level is a JSON {type(data).__name__}, not an object")
    return data


def describe(error: Exception) -> str:
    """One line saying what is wrong with a file that did not decode (for the corrupt-store message)."""
    if isinstance(error, orjson.JSONDecodeError):
        return f"not JSON: {error}"
    if isinstance(error, cattrs.BaseValidationError):
        lines = cattrs.transform_error(error)
        return "not the statistics format: " + "; ".join(lines[:3])
    return f"not the statistics format: {error}"


__all__ = [
    "EMPTY",
    "MIGRATIONS",
    "VERSION",
    "CapabilityRecord",
    "FamilyRecord",
    "Inconsistent",
    "LearnedRecord",
    "RevisionRecord",
    "Sequences",
    "StatisticsFile",
    "check",
    "decode",
    "describe",
    "encode",
    "family_key",
    "parse",
]
