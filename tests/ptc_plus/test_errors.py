"""The pinned serialized error shape and localized messages of the error root."""

from __future__ import annotations

from ptc_plus.errors import PtcError, UsageError


def test_error_shape_is_pinned() -> None:
    error = UsageError(detail="bad flag")
    assert error.to_json("en") == {
        "code": "PTC-1001",
        "message": "Usage error: bad flag",
        "params": {"detail": "bad flag"},
    }


def test_error_message_in_both_locales() -> None:
    error = PtcError("PTC-1000", detail="x")
    assert error.message("en") != error.message("zh")
    assert "x" in error.message("zh")
    assert str(error) == error.message("en")
