"""Search quality: recall@1 and recall@3 over a labelled query set (half Chinese).

Catalog: the real MCP corpus + the reference demo tools + synthetic services,
skills and resource sources (≥ 300 capabilities). Baseline in the same run: a
naive ranker counting raw query words (whitespace split; each CJK character a
word) in name + description. Also checks the budget rules on every query.

Run: ``/work/venv/bin/python benchmarks/search_quality.py`` → benchmarks/results/search_quality.json
"""

from __future__ import annotations

import platform
import sys
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from catalog_data import DATA, benchmark_catalog_parts

from ptc_plus.capabilities.catalog import build_catalog
from ptc_plus.capabilities.discovery import search
from ptc_plus.capabilities.search import rank
from ptc_plus.capabilities.snapshot import CatalogSnapshot, build_snapshot

RESULTS = Path(__file__).resolve().parent / "results" / "search_quality.json"
BUDGETS = (40, 150, 600, 2000)


def naive_rank(snapshot: CatalogSnapshot, query: str) -> list[str]:
    words = [w.lower() for w in query.split()] if query.isascii() else [c for c in query if not c.isspace()]
    scored = []
    for capability in snapshot.catalog.capabilities:
        haystack = (capability.name + " " + capability.description).lower()
        score = sum(1 for w in words if w in haystack)
        if score:
            scored.append((-score, capability.identity))
    return [identity for _, identity in sorted(scored)]


def recall(ranked: list[list[str]], expected: list[list[str]], k: int) -> float:
    hits = sum(1 for r, e in zip(ranked, expected, strict=True) if set(r[:k]) & set(e))
    return round(hits / max(1, len(expected)), 4)


def budget_violations(snapshot: CatalogSnapshot, query: str) -> list[str]:
    problems = []
    for budget in BUDGETS:
        response = search(snapshot, query, budget=budget)
        if response["tokens"] > budget or snapshot.counter.count(response["text"]) != response["tokens"]:
            problems.append(f"{query!r} budget {budget}: {response['tokens']} tokens")
        for item in response["expanded"]:
            contract = snapshot.get(item["identity"])
            whole = contract is not None and (
                contract.tool is None or f"def {contract.tool.function}(" in response["text"]
            )
            if not whole:
                problems.append(f"{query!r} budget {budget}: {item['identity']} not delivered whole")
        for item in response["not_expanded"]:
            if item["reason"] == "over-budget" and item["tokens"] <= budget:
                problems.append(f"{query!r} budget {budget}: {item['identity']} wrongly over budget")
    return problems


def main() -> int:
    tools, skills, resources = benchmark_catalog_parts()
    snapshot = build_snapshot(build_catalog(tools=tools, skills=skills, resources=resources))
    labelled = orjson.loads((DATA / "search_queries.json").read_bytes())["queries"]
    for item in labelled:
        missing = [e for e in item["expected"] if snapshot.get(e) is None]
        if missing:
            raise SystemExit(f"query {item['query']!r} expects unknown capabilities {missing}")
    report: dict[str, Any] = {
        "version": 1,
        "catalog_size": len(snapshot.catalog.capabilities),
        "queries": len(labelled),
        "python": platform.python_version(),
        "by_language": {},
        "misses": [],
    }
    for lang in ("all", "en", "zh"):
        chosen = [q for q in labelled if lang == "all" or q["lang"] == lang]
        expected = [q["expected"] for q in chosen]
        ours = [[m.identity for m in rank(snapshot.index, q["query"], limit=3)] for q in chosen]
        naive = [naive_rank(snapshot, q["query"])[:3] for q in chosen]
        report["by_language"][lang] = {
            "queries": len(chosen),
            "recall@1": recall(ours, expected, 1),
            "recall@3": recall(ours, expected, 3),
            "baseline_recall@1": recall(naive, expected, 1),
            "baseline_recall@3": recall(naive, expected, 3),
        }
        if lang == "all":
            report["misses"] = [
                {"query": q["query"], "expected": q["expected"], "top3": r}
                for q, r in zip(chosen, ours, strict=True)
                if not set(r[:1]) & set(q["expected"])
            ]
    violations = [p for q in labelled for p in budget_violations(snapshot, q["query"])]
    report["budget_checks"] = len(labelled) * len(BUDGETS)
    report["budget_violations"] = violations
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n")
    for lang, numbers in report["by_language"].items():
        print(lang, numbers)
    print("budget violations:", len(violations))
    return 1 if violations else 0


if __name__ == "__main__":
    raise SystemExit(main())
