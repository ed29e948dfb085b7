"""The host's parsing of the kernel-mode frames: ``repl`` and ``done`` with ``volatile``."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from ptc_plus.runtime import protocol
from ptc_plus.runtime.protocol import Done, ProtocolViolation, Repl


def _parse(message: dict[str, Any]) -> protocol.ChildFrame:
    return protocol.parse(orjson.dumps(message), 1 << 20)


def test_a_repl_frame_is_parsed() -> None:
    frame = _parse({"type": "repl", "id": 3, "op": "save", "name": "s", "volatile": {"kind": "socket", "detail": "d"}})
    assert isinstance(frame, Repl)
    assert (frame.id, frame.op, frame.name, frame.volatile) == (3, "save", "s", ("socket", "d"))
    listed = _parse({"type": "repl", "id": 4, "op": "list", "name": None, "volatile": None})
    assert isinstance(listed, Repl) and listed.name is None and listed.volatile is None


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"op": "exec", "name": None}, "repl_op"),
        ({"op": "save", "name": 5}, "repl_name"),
        ({"op": "save", "name": "x" * 201}, "repl_name"),
        ({"op": "save", "name": "s", "volatile": {"kind": "socket"}}, "volatile_shape"),
        ({"op": "save", "name": "s", "volatile": {"kind": 1, "detail": "d"}}, "volatile_shape"),
        ({"op": "save", "name": "s", "id": "1"}, "not_integer"),
    ],
)
def test_a_malformed_repl_frame_is_a_violation(fields: dict[str, Any], reason: str) -> None:
    with pytest.raises(ProtocolViolation) as raised:
        _parse({"type": "repl", "id": 1, **fields})
    assert raised.value.key == reason


def test_done_carries_volatile() -> None:
    frame = _parse({"type": "done", "ok": True, "value": 1, "volatile": {"kind": "ctypes", "detail": "x"}})
    assert isinstance(frame, Done) and frame.volatile == ("ctypes", "x")
    failed = _parse({"type": "done", "ok": False, "error": {"kind": "exception"}, "volatile": None})
    assert isinstance(failed, Done) and failed.volatile is None
    plain = _parse({"type": "done", "ok": True, "value": 1})
    assert isinstance(plain, Done) and plain.volatile is None
    with pytest.raises(ProtocolViolation) as raised:
        _parse({"type": "done", "ok": True, "value": 1, "volatile": ["ctypes", "x"]})
    assert raised.value.key == "volatile_shape"
