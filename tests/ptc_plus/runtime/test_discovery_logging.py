"""A discovery failure the program only sees as an error is logged for the operator too (ADR 0057)."""

from __future__ import annotations

import pytest

from ptc_plus.discovery import CatalogSnapshot
from ptc_plus.runtime.discovery import answer, source_for
from ptc_plus.runtime.errors import DiscoveryFailed

from .conftest import AGENT


class ProviderBug(Exception):
    pass


def broken_provider(agent: object) -> CatalogSnapshot | None:
    raise ProviderBug("index missing")


def test_a_discovery_provider_bug_is_logged_with_its_traceback(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("ERROR", logger="ptc_plus.runtime.discovery"):
        source = source_for(broken_provider, AGENT)
    assert isinstance(source, DiscoveryFailed)  # the run goes on; its programs get the error
    (record,) = [r for r in caplog.records if r.name == "ptc_plus.runtime.discovery"]
    assert AGENT.agent_id in record.getMessage()
    assert record.exc_info is not None and record.exc_info[0] is ProviderBug


def test_a_discovery_bug_while_answering_is_logged(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken_call(*args: object) -> object:
        raise ProviderBug("ranker crashed")

    monkeypatch.setattr("ptc_plus.discovery.call", broken_call)
    snapshot = object.__new__(CatalogSnapshot)  # never read: the call itself breaks
    with caplog.at_level("ERROR", logger="ptc_plus.runtime.discovery"):
        ok, response = answer(snapshot, "tree", {})
    assert not ok and isinstance(response, dict) and response["code"] == DiscoveryFailed.code
    (record,) = [r for r in caplog.records if r.name == "ptc_plus.runtime.discovery"]
    assert record.exc_info is not None and record.exc_info[0] is ProviderBug
