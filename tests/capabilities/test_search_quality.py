"""The labelled query set (half Chinese) over the ≥ 300-capability benchmark catalog.

Floors sit just under the measured numbers (benchmarks/results/search_quality.json)
so a ranking regression fails here; ``benchmarks/search_quality.py`` reports the full figures.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import orjson

from ptc_plus.capabilities.catalog import build_catalog
from ptc_plus.capabilities.search import rank
from ptc_plus.capabilities.snapshot import build_snapshot

ROOT = Path(__file__).resolve().parent.parent.parent


def _catalog_data() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_catalog_data", ROOT / "benchmarks" / "catalog_data.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_catalog_data", module)
    spec.loader.exec_module(module)
    return module


def test_labelled_queries_meet_the_recall_floors() -> None:
    tools, skills, resources = _catalog_data().benchmark_catalog_parts()
    snapshot = build_snapshot(build_catalog(tools=tools, skills=skills, resources=resources))
    queries = orjson.loads((ROOT / "tests" / "data" / "search_queries.json").read_bytes())["queries"]
    assert len(snapshot.catalog.capabilities) >= 300
    assert len(queries) >= 60 and sum(q["lang"] == "zh" for q in queries) * 2 >= len(queries)
    top3 = [[m.identity for m in rank(snapshot.index, q["query"], limit=3)] for q in queries]
    at1 = sum(bool(set(r[:1]) & set(q["expected"])) for r, q in zip(top3, queries, strict=True)) / len(queries)
    at3 = sum(bool(set(r) & set(q["expected"])) for r, q in zip(top3, queries, strict=True)) / len(queries)
    assert at1 >= 0.65
    assert at3 >= 0.90
