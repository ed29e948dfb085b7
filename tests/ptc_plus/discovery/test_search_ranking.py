"""Terms, keyword index and ranking: deterministic, English and Chinese, editable."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookspecs.types import ToolSpec
from ptc_plus.capabilities.catalog import build_catalog
from ptc_plus.discovery.errors import InvalidKeywordIndex
from ptc_plus.discovery.keywords import (
    KeywordIndex,
    compile_keywords,
    default_keyword_index,
    load_keyword_index,
    save_keyword_index,
)
from ptc_plus.discovery.ranker import rank
from ptc_plus.discovery.snapshot import CatalogSnapshot, build_snapshot
from ptc_plus.discovery.terms import UNIGRAM_PREFIX, stem, terms


def top(snapshot: CatalogSnapshot, query: str, k: int = 1) -> list[str]:
    return [m.identity for m in rank(snapshot.index, query, limit=k)]


def test_names_split_on_underscore_camel_dot_slash() -> None:
    assert terms("getCurrentTime") == ["get", "current", "time"]
    assert terms("git_diff.staged/HTTPServer-v2") == ["git", "diff", "stag", "http", "server", "v", "2"]


def test_stemming_meets_plural_and_verb_forms() -> None:
    assert stem("branches") == stem("branch") == "branch"
    assert stem("created") == stem("creating") == stem("creates") == stem("create")
    assert stem("queries") == "query" and stem("status") == "status"


def test_cjk_text_becomes_bigrams_and_marked_unigrams() -> None:
    assert terms("获取时间") == ["获取", "取时", "时间", *(UNIGRAM_PREFIX + c for c in "获取时间")]
    assert UNIGRAM_PREFIX + "的" not in terms("我的时间")


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("current time in a timezone", "mcp:time/get_current_time"),
        ("git commit history", "mcp:git/git_log"),
        ("run a shell command", "mcp:shell/shell_execute"),
        ("获取当前时间", "mcp:time/get_current_time"),
        ("查看提交历史", "mcp:git/git_log"),
        ("删除工作表", "mcp:excel/delete_worksheet"),
        ("转换时区", "mcp:time/convert_time"),
        ("get_sentry_issue", "mcp:sentry/get_sentry_issue"),
        ("mcp:duckdb/query", "mcp:duckdb/query"),
    ],
)
def test_ranking_finds_the_obvious_tool(corpus_snapshot: CatalogSnapshot, query: str, expected: str) -> None:
    assert top(corpus_snapshot, query) == [expected]


def test_ranking_is_deterministic_and_independent_of_catalog_order(corpus_specs: list[ToolSpec]) -> None:
    forward = build_snapshot(build_catalog(tools=corpus_specs))
    backward = build_snapshot(build_catalog(tools=list(reversed(corpus_specs))))
    for query in ("file", "创建", "query the database", "time"):
        assert rank(forward.index, query) == rank(backward.index, query) == rank(forward.index, query)


def test_nothing_matches_nonsense(corpus_snapshot: CatalogSnapshot) -> None:
    assert rank(corpus_snapshot.index, "zzqx ") == []
    assert rank(corpus_snapshot.index, "") == []


def test_the_keyword_index_is_editable(corpus_snapshot: CatalogSnapshot) -> None:
    assert "mcp:sqlite/append_insight" not in top(corpus_snapshot, "洞见", 3)
    edited = default_keyword_index().with_term("洞见", ["insight", "memo"])
    snapshot = build_snapshot(corpus_snapshot.catalog, keywords=edited)
    assert top(snapshot, "洞见") == ["mcp:sqlite/append_insight"]
    tagged = default_keyword_index().with_keywords("mcp:calculator/calculate", ["abacus"])
    assert top(build_snapshot(corpus_snapshot.catalog, keywords=tagged), "abacus") == ["mcp:calculator/calculate"]


def test_keyword_index_round_trips_and_rejects_bad_files(tmp_path: Path) -> None:
    index = KeywordIndex().with_group(["erase", "wipe"]).with_term("擦除", ["erase"]).with_keywords("host:x", ["y"])
    path = tmp_path / "keywords.json"
    save_keyword_index(index, path)
    assert load_keyword_index(path) == index
    merged = default_keyword_index([path])
    assert compile_keywords(merged).latin["wipe"] >= {"eras"}
    path.write_text('{"version": 1, "groups": "nope"}')
    with pytest.raises(InvalidKeywordIndex) as info:
        load_keyword_index(path)
    assert info.value.code == "PTC-3103"
    path.write_text('{"version": 99}')
    with pytest.raises(InvalidKeywordIndex):
        load_keyword_index(path)
