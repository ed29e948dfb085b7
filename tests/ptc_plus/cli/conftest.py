"""Fixtures every ``ptc-plus`` command test shares: an isolated, English environment (the empty ``workspace`` is
suite-wide, ``tests/conftest.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ptc_plus.cli.test_chat import FakeOpenAI
from tests.scaffolding import isolate_from_the_machine


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No ``PTC_*`` variable, ``NO_COLOR`` or user config file from the machine; English unless a test says otherwise.

    The user config file is ``tmp_path/xdg/ptc-plus/config.toml`` (absent until a test writes it).
    """
    isolate_from_the_machine(monkeypatch, tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("PTC_LOCALE", "en")


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    """A scripted OpenAI-compatible endpoint on 127.0.0.1 (replies queued in ``server.replies``), closed after."""
    fake = FakeOpenAI()
    try:
        yield fake
    finally:
        fake.close()
