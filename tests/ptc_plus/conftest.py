"""Fixtures: the real MCP corpus as a catalog snapshot, the benchmarks' catalog data module and benchmark
catalog, and the labelled queries the ranking identity tests rank."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import orjson
import pytest

from hookspecs.types import SkillSpec, ToolSpec
from ptc_plus.capabilities import ResourceEntry, ResourceSource, build_catalog, cost
from ptc_plus.discovery.snapshot import CatalogSnapshot, build_snapshot
from ptc_plus.sdk.tools_file import load_tool_specs

DATA = Path(__file__).resolve().parents[1] / "data"
BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


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


EDGE_CASES = (
    "",
    "   ",
    "list",
    "s3",
    "ec2 instance",
    "parse_config 12306",
    "12306",
    "Create Issue",
    "github_create_issue",
)


@pytest.fixture(scope="session")
def queries() -> list[str]:
    """Every labelled query of both evaluation sets and a few edge cases, each once, in file order."""
    labelled = [q["query"] for q in orjson.loads((DATA / "search_queries.json").read_bytes())["queries"]]
    hard = [q["text"] for q in orjson.loads((DATA / "search_eval" / "queries.json").read_bytes())["queries"]]
    return list(dict.fromkeys([*labelled, *hard, *EDGE_CASES]))


@pytest.fixture(scope="session")
def benchmark_snapshot(catalog_data: ModuleType) -> CatalogSnapshot:
    """The 307-capability benchmark catalog (no disk cache)."""
    tools, skills, resources = catalog_data.benchmark_catalog_parts()
    return build_snapshot(build_catalog(tools=tools, skills=skills, resources=resources), cache=None)


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
