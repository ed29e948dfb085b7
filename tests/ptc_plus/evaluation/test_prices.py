"""Price sheets: each sheet's bill is the sum of the counted parts times its multipliers; unknown stays unknown."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hookspecs.serialization import structure, unstructure
from ptc_plus.evaluation.prices import DEFAULT, HALF_CACHE, SHEETS, WRITE_SURCHARGE, PriceSheet, cost

counts = st.integers(min_value=0, max_value=10**7)


def test_the_three_sheets_and_their_shapes() -> None:
    assert list(SHEETS) == ["default", "write-surcharge", "half-cache"]
    assert (DEFAULT.cached, DEFAULT.uncached, DEFAULT.cache_write, DEFAULT.output) == (0.1, 1.0, None, 5.0)
    assert (WRITE_SURCHARGE.cached, WRITE_SURCHARGE.cache_write, WRITE_SURCHARGE.output) == (0.1, 1.25, 5.0)
    assert (HALF_CACHE.cached, HALF_CACHE.output) == (0.5, 4.0)
    assert all(sheet.version == 1 for sheet in SHEETS.values())


@given(cached=counts, uncached=counts, output=counts, share=st.floats(min_value=0, max_value=1))
def test_a_bill_is_the_counted_parts_times_the_sheet(cached: int, uncached: int, output: int, share: float) -> None:
    written = int(uncached * share)
    parts = {"cached": cached, "uncached": uncached, "written": written, "output": output}
    assert cost(DEFAULT, **parts) == pytest.approx(cached * 0.1 + uncached + output * 5)
    assert cost(HALF_CACHE, **parts) == pytest.approx(cached * 0.5 + uncached + output * 4)
    # Written tokens are part of the uncached ones: the surcharge is their extra quarter.
    expected = cached * 0.1 + (uncached - written) + written * 1.25 + output * 5
    assert cost(WRITE_SURCHARGE, **parts) == pytest.approx(expected)


def test_unknown_parts_make_an_unknown_bill_never_a_zero() -> None:
    assert cost(DEFAULT, cached=None, uncached=10, written=10, output=1) is None
    assert cost(DEFAULT, cached=1, uncached=10, written=None, output=1) == pytest.approx(15.1)  # not read
    assert cost(WRITE_SURCHARGE, cached=1, uncached=10, written=None, output=1) is None


def test_a_sheet_round_trips_as_a_versioned_value() -> None:
    raw = unstructure(WRITE_SURCHARGE)
    assert raw["version"] == 1 and raw["name"] == "write-surcharge"
    assert structure(raw, PriceSheet) == WRITE_SURCHARGE
