"""Fixtures: the real MCP corpus as a catalog snapshot, and the benchmarks' catalog data module."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from hookspecs.types import SkillSpec, ToolSpec
from ptc_plus.capabilities import ResourceEntry, ResourceSource, build_catalog, cost
from ptc_plus.capabilities.snapshot import CatalogSnapshot, build_snapshot
from ptc_plus.sdk.tools_file import load_tool_specs

DATA = Path(__file__).resolve().parents[2] / "data"
BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"


@pytest.fixture(scope="session")
def catalog_data() -> ModuleType:
    """``benchmarks/catalog_data.py`` (the 307-capability benchmark catalog and the scaled catalogs), loaded once."""
    known = sys.modules.get("bench_catalog_data")
    if known is not None:
        return known
    spec = importlib.util.spec_from_file_location("bench_catalog_data", BENCHMARKS / "catalog_data.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_catalog_data"] = module
    spec.loader.exec_module(module)
    return module


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
