"""The ranker's shortcuts without numpy (``search._lexical_top``) against the whole definition.

With a limit and no semantic layer, :func:`~ptc_plus.capabilities.search.reference_ranking` scores only
the documents whose bound can reach the top ``limit``. Over every labelled query of both sets, on the
benchmark catalog and a scaled one (numbered copies of services: thousands of documents sharing a word),
its :class:`Ranking` must be the whole ranking cut to the limit, to the last bit (compared by ``repr``),
``total`` included; and the shortcut must really have been taken, or this compares nothing.
"""

from __future__ import annotations

from types import ModuleType

import attrs
import pytest

from ptc_plus.capabilities import search
from ptc_plus.capabilities.catalog import build_catalog
from ptc_plus.capabilities.search import Ranking, reference_ranking
from ptc_plus.capabilities.snapshot import CatalogSnapshot, build_snapshot

LIMITS = (1, 3, 10)


@pytest.fixture(scope="module")
def scaled_snapshot(catalog_data: ModuleType) -> CatalogSnapshot:
    return build_snapshot(build_catalog(tools=catalog_data.scaled_tools(2500), cache=None), cache=None)


def _cut(whole: Ranking, limit: int) -> Ranking:
    return attrs.evolve(whole, matches=whole.matches[:limit])


@pytest.mark.parametrize("catalog", ["benchmark_snapshot", "scaled_snapshot"])
def test_a_limited_ranking_is_the_whole_ranking_cut(
    catalog: str, queries: list[str], request: pytest.FixtureRequest
) -> None:
    snapshot: CatalogSnapshot = request.getfixturevalue(catalog)
    differing = []
    for query in queries:
        whole = reference_ranking(snapshot.index, query)
        for limit in LIMITS:
            if repr(reference_ranking(snapshot.index, query, limit=limit)) != repr(_cut(whole, limit)):
                differing.append(f"{query!r} limit={limit}")
    assert differing == []


def test_the_shortcut_leaves_most_documents_unscored_at_scale(
    queries: list[str], scaled_snapshot: CatalogSnapshot
) -> None:
    index = scaled_snapshot.index
    scored = matched = shortened = 0
    for query in queries:
        found, total = search._lexical_top(index, query, 10)
        assert total == len(search._lexical(index, query))
        scored += len(found)
        matched += total
        shortened += len(found) < total
    assert shortened > len(queries) // 2
    assert scored < matched / 2


def test_the_shortcut_scores_what_the_definition_does(queries: list[str], scaled_snapshot: CatalogSnapshot) -> None:
    index = scaled_snapshot.index
    for query in queries:
        whole = {doc: value.hex() for doc, value in search._lexical(index, query).items()}
        found, _ = search._lexical_top(index, query, 10)
        assert {doc: value.hex() for doc, value in found.items()} == {doc: whole[doc] for doc in found}, query
