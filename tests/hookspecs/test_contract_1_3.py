"""Contract 1.3 (ADR 0068): the version, and the receipt status a change command gives when nothing changes."""

from __future__ import annotations

import hookspecs
from hookspecs import CONTRACT_VERSION, ReceiptStatus, specs


def test_the_contract_version_is_1_3() -> None:
    assert CONTRACT_VERSION == "1.3" == specs.CONTRACT_VERSION
    assert "ReceiptStatus" in hookspecs.__all__


def test_unchanged_is_a_receipt_status_of_its_own() -> None:
    assert ReceiptStatus("unchanged") is ReceiptStatus.UNCHANGED
    assert len({s.value for s in ReceiptStatus}) == len(ReceiptStatus) == 5
