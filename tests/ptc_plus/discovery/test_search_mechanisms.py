"""Ranking mechanisms of ADR 0026: action classes, concept units, expansion order, pairs, name share."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookspecs.types import ToolSpec
from ptc_plus.capabilities.catalog import build_catalog
from ptc_plus.discovery import loops
from ptc_plus.discovery.keywords import (
    KeywordIndex,
    compile_keywords,
    default_keyword_index,
    load_keyword_index,
    save_keyword_index,
)
from ptc_plus.discovery.query import analyse
from ptc_plus.discovery.ranker import (
    ACTION_AGREES,
    ACTION_CONFLICTS,
    ACTION_RELATED,
    NAME_SHARE_WEIGHT,
    action_factor,
    rank,
)
from ptc_plus.discovery.snapshot import CatalogSnapshot, build_snapshot

OBJECT = {"type": "object", "properties": {"id": {"type": "string"}}}


def tool(name: str, description: str, source: str = "mcp:tracker") -> ToolSpec:
    return ToolSpec(name=name, description=description, input_schema=OBJECT, source=source)


@pytest.fixture(scope="module")
def siblings() -> CatalogSnapshot:
    """One object, every verb: only the action can choose among them."""
    verbs = {
        "create": "Create a new issue in the tracker.",
        "list": "List every issue in the tracker, newest first, a page at a time.",
        "get": "Get one issue from the tracker by id.",
        "update": "Update fields of an existing issue in the tracker.",
        "delete": "Delete an issue from the tracker permanently.",
        "search": "Search issues in the tracker by keyword.",
    }
    specs = [tool(f"{verb}_issue", text) for verb, text in verbs.items()]
    specs.append(tool("send_message", "Send a chat message to a channel.", source="mcp:chat"))
    specs.append(tool("create_email", "Create a new email in the mailbox.", source="mcp:mail"))
    return build_snapshot(build_catalog(tools=specs))


def top(snapshot: CatalogSnapshot, query: str) -> str:
    return rank(snapshot.index, query, limit=1)[0].identity


@pytest.mark.parametrize(
    ("query", "verb"),
    [
        ("make a new issue", "create"),
        ("add an issue", "create"),
        ("show issues", "get"),
        ("enumerate the issues", "list"),
        ("modify an issue", "update"),
        ("erase that issue", "delete"),
        ("find issues about login", "search"),
        ("新建一个问题", "create"),
        ("删除这个问题", "delete"),
        ("修改问题", "update"),
    ],
)
def test_the_query_verb_chooses_among_siblings(siblings: CatalogSnapshot, query: str, verb: str) -> None:
    assert top(siblings, query) == f"mcp:tracker/{verb}_issue"


def test_the_object_outweighs_a_verb_of_the_same_family(siblings: CatalogSnapshot) -> None:
    # "send" names produce.send, create_email is produce.create: the object (email) decides.
    assert top(siblings, "send an email") == "mcp:mail/create_email"
    assert top(siblings, "发送一封邮件") == "mcp:mail/create_email"


def test_action_factor_rewards_class_then_family_and_penalises_exclusive_families() -> None:
    create, send = frozenset({"produce.create"}), frozenset({"produce.send"})
    listing, run = frozenset({"read.list"}), frozenset({"run"})
    assert action_factor(create, create) == ACTION_AGREES
    assert action_factor(create, send) == ACTION_RELATED
    assert action_factor(create, listing) == ACTION_CONFLICTS
    assert action_factor(run, listing) == action_factor(listing, run) == 1.0
    assert action_factor(frozenset(), listing) == action_factor(create, frozenset()) == 1.0
    assert ACTION_CONFLICTS < 1.0 < ACTION_RELATED < ACTION_AGREES


def test_a_documents_action_comes_from_its_own_first_name_word(siblings: CatalogSnapshot) -> None:
    git = build_snapshot(
        build_catalog(tools=[tool("git_add", "Adds file contents", source="mcp:git"), tool("git_log", "Logs")])
    )
    ids = git.index.identities
    assert git.index.actions[ids.index("mcp:git/git_add")] == frozenset({"produce.create"})
    assert git.index.name_words[ids.index("mcp:git/git_add")] == frozenset({"add"})
    assert git.index.actions[ids.index("mcp:tracker/git_log")] == frozenset()


def test_units_carry_the_actions_their_own_word_names(siblings: CatalogSnapshot) -> None:
    units = analyse("delete the list of stages", siblings.index.keywords)
    assert [u.actions for u in units] == [frozenset({"delete.remove"}), frozenset({"read.list"}), frozenset()]
    # a synonym's action is not the word's: "stage" is grouped with "add" but names no action
    assert analyse("查看", siblings.index.keywords)[0].actions == frozenset({"read.get", "read.list"})


def test_the_first_expansion_of_a_dictionary_word_weighs_most() -> None:
    specs = [tool("create_ticket", "Create a new ticket."), tool("create_issue", "Create a new issue.")]
    catalog = build_catalog(tools=specs)
    ticket_first = build_snapshot(catalog, keywords=KeywordIndex().with_term("工单", ["ticket", "issue"]))
    issue_first = build_snapshot(catalog, keywords=KeywordIndex().with_term("工单", ["issue", "ticket"]))
    assert top(ticket_first, "工单") == "mcp:tracker/create_ticket"
    assert top(issue_first, "工单") == "mcp:tracker/create_issue"


def test_synonyms_of_one_word_do_not_add_up() -> None:
    # b matches "erase" and its synonym "wipe"; a matches "erase" once. One concept, one match each.
    specs = [tool("tool_b", "Erase and wipe a disk."), tool("tool_a", "Erase a disk and more.")]
    keywords = KeywordIndex().with_group(["erase", "wipe"])
    snapshot = build_snapshot(build_catalog(tools=specs), keywords=keywords)
    scores = {m.identity: m.score for m in rank(snapshot.index, "erase")}
    assert scores["mcp:tracker/tool_a"] >= scores["mcp:tracker/tool_b"] * 0.95


def test_neighbouring_query_words_found_together_rank_higher() -> None:
    # Same words, same lengths; only "tool_z" has "merge" next to "cells" (and would lose the identity tie-break).
    specs = [tool("tool_a", "Cells of a sheet merge."), tool("tool_z", "Merge cells of a sheet.")]
    snapshot = build_snapshot(build_catalog(tools=specs), keywords=KeywordIndex())
    assert top(snapshot, "merge cells") == "mcp:tracker/tool_z"
    pairs = snapshot.index.pairs
    assert (
        pairs["merg"]["cell"]
        == pairs["cell"]["merg"]
        == ((snapshot.index.identities.index("mcp:tracker/tool_z"), 0.5),)
    )


def test_name_share_scales_by_the_share_of_name_words_the_query_names(monkeypatch: pytest.MonkeyPatch) -> None:
    specs = [tool("current_time", "Now."), tool("time_zone_offset", "Now.")]
    snapshot = build_snapshot(build_catalog(tools=specs), keywords=KeywordIndex())
    with_share = {m.identity: m.score for m in rank(snapshot.index, "current time")}
    monkeypatch.setattr(loops, "NAME_SHARE_WEIGHT", 0.0)  # the definition ranks catalogs this small
    without = {m.identity: m.score for m in rank(snapshot.index, "current time")}
    whole, third = "mcp:tracker/current_time", "mcp:tracker/time_zone_offset"
    assert with_share[whole] == pytest.approx(without[whole] * (1 + NAME_SHARE_WEIGHT))
    assert with_share[third] == pytest.approx(without[third] * (1 + NAME_SHARE_WEIGHT / 3))


def test_an_action_alone_can_choose_a_sibling(siblings: CatalogSnapshot) -> None:
    # "browse" is no synonym of anything, so only its action class (read.list) tells the siblings apart.
    assert top(siblings, "browse issues") == "mcp:tracker/list_issue"


def test_actions_are_editable_and_old_files_without_them_still_load(tmp_path: Path) -> None:
    path = tmp_path / "keywords.json"
    path.write_text('{"version": 1, "groups": [["erase", "wipe"]]}')
    assert load_keyword_index(path).actions == {}
    index = KeywordIndex().with_action("delete.remove", ["nuke"]).with_action("delete.remove", ["zap"])
    save_keyword_index(index, path)
    assert load_keyword_index(path) == index
    assert compile_keywords(default_keyword_index([path])).actions["nuke"] == frozenset({"delete.remove"})
    path.write_text('{"version": 1, "actions": {"delete.remove": "nuke"}}')
    with pytest.raises(Exception, match="actions"):
        load_keyword_index(path)


def test_limited_and_unlimited_rankings_agree_and_are_ordered(siblings: CatalogSnapshot) -> None:
    for query in ("make a new issue", "发送一封邮件", "issue", "send"):
        everything = rank(siblings.index, query)
        assert everything == rank(siblings.index, query)
        assert rank(siblings.index, query, limit=3) == everything[:3]
        assert [(-m.score, m.identity) for m in everything] == sorted((-m.score, m.identity) for m in everything)


def test_a_several_word_expansion_adds_up_its_words() -> None:
    # "透视表" → "pivot table": both words count, so the pivot table beats a plain table.
    specs = [tool("create_pivot_table", "Create a pivot table."), tool("create_table", "Create a table.")]
    keywords = KeywordIndex().with_term("透视表", ["pivot table"]).with_term("表", ["table"])
    snapshot = build_snapshot(build_catalog(tools=specs), keywords=keywords)
    assert top(snapshot, "透视表") == "mcp:tracker/create_pivot_table"
    assert analyse("透视表", snapshot.index.keywords)[0].phrases == (("pivot", "tabl"),)
