"""The per-build term memo of the index: the memoised path gives the same index as the plain one."""

from __future__ import annotations

import gc
from collections.abc import Sequence

import pytest

from hookspecs.types import ToolSpec
from ptc_plus.capabilities import build_catalog
from ptc_plus.capabilities.capability import Capability
from ptc_plus.discovery import index as index_module
from ptc_plus.discovery.index import SearchIndex, _MemoTerms, build_index, document_fields
from ptc_plus.discovery.keywords import CompiledKeywords, compile_keywords, default_keyword_index
from ptc_plus.discovery.ranker import rank
from ptc_plus.discovery.snapshot import CatalogSnapshot

QUERIES = ("delete a branch", "list issues", "创建文件", "read file contents", "search the web", "git_add")


def _repeating_specs(corpus_specs: list[ToolSpec]) -> list[ToolSpec]:
    """The corpus and a copy under other sources: descriptions, parameter names and names repeat."""
    copies = [
        ToolSpec(name=s.name, description=s.description, input_schema=s.input_schema, source=f"{s.source}-copy")
        for s in corpus_specs
    ]
    return corpus_specs + copies


def test_memoised_fields_equal_document_fields_and_do_not_alias(corpus_specs: list[ToolSpec]) -> None:
    keywords = compile_keywords(default_keyword_index())
    memo = _MemoTerms()
    for capability in build_catalog(tools=_repeating_specs(corpus_specs)).managed():
        got = memo.fields(capability, keywords)
        assert got == document_fields(capability, keywords)
        for terms_of_field in got.values():
            terms_of_field.append("\0mutated")
    # A list handed out must not be the memo's own storage: the next look-up is unaffected.
    again = build_catalog(tools=corpus_specs[:1]).managed()[0]
    assert "\0mutated" not in str(memo.fields(again, keywords))


def test_memoised_build_index_answers_like_the_plain_path(
    corpus_specs: list[ToolSpec], corpus_snapshot: CatalogSnapshot, monkeypatch: pytest.MonkeyPatch
) -> None:
    keywords = corpus_snapshot.index.keywords
    capabilities = build_catalog(tools=_repeating_specs(corpus_specs)).managed()
    memoised = build_index(capabilities, keywords)
    monkeypatch.setattr(index_module._MemoTerms, "fields", lambda self, c, k: document_fields(c, k))
    plain = build_index(capabilities, keywords)
    assert memoised == plain
    for query in QUERIES:
        assert rank(memoised, query, limit=10) == rank(plain, query, limit=10)


def test_a_large_build_leaves_the_collector_as_it_found_it(
    corpus_specs: list[ToolSpec], monkeypatch: pytest.MonkeyPatch
) -> None:
    keywords = compile_keywords(default_keyword_index())
    capabilities = build_catalog(tools=_repeating_specs(corpus_specs)).managed()
    monkeypatch.setattr(index_module, "_PAUSE_COLLECTOR_ABOVE", len(capabilities) - 1)
    seen: list[bool] = []
    real = index_module._build_index

    def spy(capabilities: Sequence[Capability], keywords: CompiledKeywords) -> SearchIndex:
        seen.append(gc.isenabled())
        return real(capabilities, keywords)

    monkeypatch.setattr(index_module, "_build_index", spy)
    assert gc.isenabled()
    try:
        build_index(capabilities, keywords)
        assert seen == [False] and gc.isenabled()
        gc.disable()
        build_index(capabilities, keywords)
        assert seen == [False, False] and not gc.isenabled()
    finally:
        gc.enable()
    build_index(capabilities[:-1], keywords)  # At or below the threshold the collector runs as usual.
    assert seen == [False, False, True]
