"""One strict converter and one canonical-bytes function for every persisted payload, host and plugin (ADR 0058)."""

from __future__ import annotations

import enum
import re
from pathlib import Path

import attrs
import cattrs
import orjson
import pytest

from hookspecs import AgentRef, SessionInfo
from hookspecs.serialization import canonical_bytes, converter, structure, unstructure
from ptc_plus.config.converter import CONVERTER
from ptc_plus.discovery.keywords import DEFAULT_PATH, load_keyword_index, save_keyword_index

ROOT = Path(__file__).resolve().parents[2]
CONVERTER_FACTORY = re.compile(r"make_converter\(|cattrs\.Converter\(|GenConverter\(|preconf")
SORTED_DUMPS = re.compile(r"OPT_SORT_KEYS")
HOME = "hookspecs/serialization.py"
NOT_PERSISTED = {
    # In-memory cache keys: a schema's sorted bytes, never written anywhere.
    "hookspecs/reference/registry.py",
    "ptc_plus/runtime/arguments.py",
    # Text shown to a person or the model, not read back.
    "hookspecs/reference/surface.py",
    "ptc_plus/cli/capabilities_plan.py",
    "ptc_plus/demo/run.py",
}


def _sources() -> dict[str, str]:
    return {
        str(path.relative_to(ROOT)): path.read_text(encoding="utf-8")
        for package in ("hookspecs", "ptc_plus")
        for path in (ROOT / package).rglob("*.py")
    }


def test_only_the_serialization_module_builds_a_converter() -> None:
    assert sorted(p for p, text in _sources().items() if CONVERTER_FACTORY.search(text) and p != HOME) == []


def test_only_the_serialization_module_writes_sorted_bytes() -> None:
    found = {p for p, text in _sources().items() if SORTED_DUMPS.search(text)}
    assert sorted(found - NOT_PERSISTED - {HOME}) == []
    assert HOME in found


def test_config_uses_the_one_converter() -> None:
    assert CONVERTER is converter


def _info(**changes: object) -> dict[str, object]:
    info = SessionInfo(agent=AgentRef(session_id="s", agent_id="s", family_id="s"), workspace=Path("/w"), user_id="u")
    return {**unstructure(info), **changes}


def test_the_host_reads_its_session_start_back_strictly() -> None:
    assert structure(_info(), SessionInfo).workspace == Path("/w")
    with pytest.raises(cattrs.BaseValidationError):
        structure(_info(user_id=7), SessionInfo)  # no coercion: 7 is not "7"
    with pytest.raises(cattrs.BaseValidationError):
        structure(_info(surprise=True), SessionInfo)  # unknown keys refused


class Colour(enum.StrEnum):
    RED = "red"


@attrs.frozen
class Sample:
    b: int
    a: Colour
    path: Path


def test_canonical_bytes_are_sorted_and_equal_for_plain_json_and_attrs_values() -> None:
    plain = {"b": [1, {"z": 1, "y": (2, 3)}], "a": "x", "e": Colour.RED}
    assert canonical_bytes(plain) == b'{"a":"x","b":[1,{"y":[2,3],"z":1}],"e":"red"}'
    assert canonical_bytes(plain) == orjson.dumps(converter.unstructure(plain), option=orjson.OPT_SORT_KEYS)
    sample = Sample(b=1, a=Colour.RED, path=Path("/p"))
    assert canonical_bytes(sample) == b'{"a":"red","b":1,"path":"/p"}'
    assert canonical_bytes({"inner": sample}) == b'{"inner":{"a":"red","b":1,"path":"/p"}}'
    assert canonical_bytes(sample, indent=True) == b'{\n  "a": "red",\n  "b": 1,\n  "path": "/p"\n}'


def test_the_keyword_index_round_trips_through_the_one_rule_set(tmp_path: Path) -> None:
    index = load_keyword_index(DEFAULT_PATH)
    save_keyword_index(index, tmp_path / "k.json")
    written = (tmp_path / "k.json").read_bytes()
    assert written == canonical_bytes(index, indent=True) + b"\n"
    assert load_keyword_index(tmp_path / "k.json") == index
