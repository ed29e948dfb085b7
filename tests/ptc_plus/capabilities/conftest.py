"""Fixtures: the real MCP corpus as a catalog snapshot."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hookspecs.types import SkillSpec, ToolSpec
from ptc_plus.capabilities import ResourceEntry, ResourceSource, build_catalog, cost
from ptc_plus.capabilities.snapshot import CatalogSnapshot, build_snapshot
from ptc_plus.sdk.tools_file import load_tool_specs

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="session")
def corpus_specs() -> list[ToolSpec]:
    return [spec for path in sorted((DATA / "mcp").glob("*.json")) for spec in load_tool_specs(path)]


@pytest.fixture(scope="session")
def corpus_snapshot(corpus_specs: list[ToolSpec]) -> CatalogSnapshot:
    catalog = build_catalog(
        tools=corpus_specs,
        skills=[SkillSpec(name="pdf", description="Fill in PDF forms and extract their text.")],
        resources=[
            ResourceSource(
                server="sqlite",
                entries=(ResourceEntry(name="Business Insights Memo", uri="memo://insights", description="Insights"),),
            )
        ],
    )
    return build_snapshot(catalog)


@pytest.fixture
def fresh_offline_counter() -> Iterator[None]:
    """``cost.offline_counter`` is built anew in the test (under its patches) and again after it (without them)."""
    cost.offline_counter.cache_clear()
    yield
    cost.offline_counter.cache_clear()
