"""Contract 1.3 (ADR 0068): the version, and the receipt status a change command gives when nothing changes."""

from __future__ import annotations

import hookspecs
from hookspecs import CONTRACT_VERSION, ReceiptStatus, specs


def test_the_contract_version_is_at_least_1_3() -> None:
    assert tuple(int(p) for p in CONTRACT_VERSION.split(".")) >= (1, 3)
    assert CONTRACT_VERSION == specs.CONTRACT_VERSION
    assert "ReceiptStatus" in hookspecs.__all__


def test_unchanged_is_a_receipt_status_of_its_own() -> None:
    assert ReceiptStatus("unchanged") is ReceiptStatus.UNCHANGED
    assert len({s.value for s in ReceiptStatus}) == len(ReceiptStatus) == 5
