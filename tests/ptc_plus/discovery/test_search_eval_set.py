"""The harder discovery evaluation set (tests/data/search_eval, issue 17): its format, not the ranker's score.

The held-out part is blind: written before the ranker scored it and pinned by
the sha256 in the file header, so a change to it fails here. Overlap is the
content-word measure defined in tests/data/search_eval/README.md.
"""

from __future__ import annotations

import copy
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ptc_plus.capabilities.catalog import build_catalog

ROOT = Path(__file__).resolve().parents[3]


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def evaluation() -> ModuleType:
    return _load("bench_search_eval", ROOT / "benchmarks" / "search_eval.py")


@pytest.fixture(scope="module")
def identities(evaluation: ModuleType) -> dict[str, str]:
    data = _load("bench_catalog_data", ROOT / "benchmarks" / "catalog_data.py")
    tools, skills, resources = data.benchmark_catalog_parts()
    catalog = build_catalog(tools=tools, skills=skills, resources=resources)
    assert len(catalog.capabilities) == 307
    return {c.identity: evaluation.target_text(c) for c in catalog.capabilities}


@pytest.fixture(scope="module")
def eval_set(evaluation: ModuleType) -> dict[str, Any]:
    loaded: dict[str, Any] = evaluation.load_set()
    return loaded


def test_the_set_has_its_sizes_halves_and_no_fit_queries(eval_set: dict[str, Any]) -> None:
    queries = eval_set["queries"]
    held_out = [q for q in queries if q["split"] == "held-out"]
    tuning = [q for q in queries if q["split"] == "tuning"]
    assert len(queries) >= 200 and len(held_out) >= 100 and len(held_out) + len(tuning) == len(queries)
    for part in (held_out, tuning):
        assert sum(q["lang"] == "en" for q in part) == sum(q["lang"] == "zh" for q in part)
        for lang in ("en", "zh"):
            assert any(not q["targets"] for q in part if q["lang"] == lang)
    assert {q["style"] for q in held_out} == {"paraphrase", "task", "casual", "keyword"}
    assert all(set(q) == {"id", "text", "lang", "style", "targets", "split"} for q in queries)


def test_the_recorded_sha256_pins_the_held_out_part(evaluation: ModuleType, eval_set: dict[str, Any]) -> None:
    assert evaluation.held_out_digest(eval_set["queries"]) == eval_set["held_out_sha256"]


def test_every_target_is_in_the_benchmark_catalog(eval_set: dict[str, Any], identities: dict[str, str]) -> None:
    unknown = [(q["id"], t) for q in eval_set["queries"] for t in q["targets"] if t not in identities]
    assert unknown == []


def test_held_out_overlap_stays_under_the_ceiling(
    evaluation: ModuleType, eval_set: dict[str, Any], identities: dict[str, str]
) -> None:
    means = evaluation.held_out_overlap(eval_set["queries"], identities)
    assert set(means) == {"en", "zh"}
    assert all(0.0 < mean <= 0.30 for mean in means.values())


def test_the_whole_set_passes_the_benchmark_s_own_check(
    evaluation: ModuleType, eval_set: dict[str, Any], identities: dict[str, str]
) -> None:
    assert evaluation.set_problems(eval_set, identities) == []


def test_the_check_catches_a_changed_held_out_query_an_unknown_target_and_lopsided_halves(
    evaluation: ModuleType, eval_set: dict[str, Any], identities: dict[str, str]
) -> None:
    tampered = copy.deepcopy(eval_set)
    first = next(q for q in tampered["queries"] if q["split"] == "held-out")
    first["text"] += " please"
    assert any("sha256" in p for p in evaluation.set_problems(tampered, identities))

    unknown = copy.deepcopy(eval_set)
    next(q for q in unknown["queries"] if q["targets"])["targets"] = ["mcp:nowhere/nothing"]
    assert any("unknown target" in p for p in evaluation.set_problems(unknown, identities))

    lopsided = copy.deepcopy(eval_set)
    lopsided["queries"] = [
        q for q in lopsided["queries"] if not (q["split"] == "tuning" and q["id"].endswith("zh-001"))
    ]
    assert any("English against" in p for p in evaluation.set_problems(lopsided, identities))


def test_overlap_counts_shared_stems_translations_and_bigrams(evaluation: ModuleType) -> None:
    assert evaluation.latin_stems("What's parse_config doing with the notes?") == ["pars", "config", "not"]
    assert evaluation.overlap("throw away note 17", ["Delete a note by id."]) == 0.3333
    # a known Chinese word matches through its English gloss: translation is overlap, not paraphrase
    assert evaluation.overlap("删除笔记", ["Delete a note by id."]) == 1.0
    assert evaluation.overlap("火车票余票", ["查询12306火车票余票信息"]) == 1.0
    assert evaluation.overlap("拉大家线上碰个头", ["Create a new meeting in Zoom video meetings."]) == 0.0
    assert evaluation.overlap("book a table", []) is None
    assert [evaluation.band(x) for x in (0.0, 0.1, 0.2999, 0.3, 0.31)] == [
        "0-10%",
        "10-20%",
        "20-30%",
        "20-30%",
        ">30%",
    ]
