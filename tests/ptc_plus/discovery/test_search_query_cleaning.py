"""Issue 17, lexical part: query tokenizer junk, casual verbs and everyday vocabulary.

Each catalog below copies the descriptions of the benchmark catalog's tools, so the fixes are
checked against the wording that made them fail.
"""

from __future__ import annotations

import pytest

from hookspecs.types import ToolSpec
from ptc_plus.capabilities.catalog import build_catalog
from ptc_plus.discovery.keywords import KeywordIndex, compile_keywords
from ptc_plus.discovery.query import analyse
from ptc_plus.discovery.ranker import rank
from ptc_plus.discovery.snapshot import CatalogSnapshot, build_snapshot
from ptc_plus.discovery.terms import QueryWord, query_words

OBJECT = {"type": "object", "properties": {"id": {"type": "string"}}}


def tool(source: str, name: str, description: str) -> ToolSpec:
    return ToolSpec(name=name, description=description, input_schema=OBJECT, source=f"mcp:{source}")


def crud(source: str, noun: str, plural: str, place: str) -> list[ToolSpec]:
    """The four generated siblings of the benchmark's synthetic services, in their wording."""
    return [
        tool(source, f"create_{noun}", f"Create a new {noun.replace('_', ' ')} in {place}."),
        tool(source, f"list_{plural}", f"List {plural.replace('_', ' ')} in {place}."),
        tool(source, f"get_{noun}", f"Get one {noun.replace('_', ' ')} from {place} by id."),
        tool(source, f"delete_{noun}", f"Delete a {noun.replace('_', ' ')} from {place} permanently."),
    ]


@pytest.fixture(scope="module")
def services() -> CatalogSnapshot:
    specs = [
        *crud("s3", "bucket_object", "bucket_objects", "Amazon S3 object storage"),
        *crud("aws_ec2", "instance", "instances", "AWS EC2 compute"),
        *crud("todoist", "todo", "todos", "Todoist personal to-do list and reminders"),
        *crud("docker", "container", "containers", "Docker engine"),
        *crud("slack", "message", "messages", "Slack channels"),
        *crud("okta", "api_token", "api_tokens", "Okta identity tokens"),
        *crud("vercel", "deployment", "deployments", "Vercel hosting deployments"),
        *crud("openweather", "forecast", "forecasts", "OpenWeather weather forecast and temperature"),
        tool("git", "git_add", "Adds file contents to the staging area"),
        tool("git", "git_commit", "Records changes to the repository"),
        tool("github_pr", "list_pull_requests", "List pull requests in GitHub pull requests."),
        tool("tree-sitter", "configure", "Configure the server."),
        tool("tree-sitter", "find_usage", "Find usage of a symbol."),
        ToolSpec(
            name="convert_units",
            description="Convert a value between units of length, mass, time or temperature.",
            input_schema=OBJECT,
            source="host",
        ),
    ]
    return build_snapshot(build_catalog(tools=specs))


def top(snapshot: CatalogSnapshot, query: str, k: int = 1) -> list[str]:
    return [m.identity for m in rank(snapshot.index, query, limit=k)]


# -- tokenizer junk ---------------------------------------------------------------------------


def test_a_contraction_loses_its_clitic() -> None:
    assert query_words("what's left, don't they'll") == [QueryWord(("left",)), QueryWord(("they",))]


def test_the_s_of_whats_does_not_find_the_s3_tools(services: CatalogSnapshot) -> None:
    assert top(services, "what's still on my to-do list") == ["mcp:todoist/list_todos"]


def test_bare_numbers_are_data_not_words(services: CatalogSnapshot) -> None:
    assert query_words("6 foot, 1.2.3.4") == [QueryWord(("6",), "6"), QueryWord(("foot",)), QueryWord(("4",), "4")]
    assert not any(i.startswith("mcp:aws_ec2/") for i in top(services, "how tall is 6 foot 2 in meters", k=3))


def test_a_number_alone_still_finds_the_server_it_names() -> None:
    # A guard, not a fix: a program may search for the 12306 server by its number.
    snapshot = build_snapshot(build_catalog(tools=[tool("12306", "query_tickets", "查询火车票余票")]))
    assert top(snapshot, "12306") == ["mcp:12306/query_tickets"]
    assert top(snapshot, "12306 2") == ["mcp:12306/query_tickets"]


def test_letters_glued_to_digits_match_only_together(services: CatalogSnapshot) -> None:
    assert query_words("ec2 a1b2") == [QueryWord(("ec", "2")), QueryWord(("a", "1", "b", "2"))]
    assert top(services, "ec2 instances") == ["mcp:aws_ec2/list_instances"]
    # A hash or a cell reference is nobody's name: no S3 or EC2 tool for its digits.
    assert top(services, "3f2 a1b2c3d") == []


def test_a_dotted_name_keeps_only_what_kind_of_thing_it_is() -> None:
    assert query_words("open budget.xlsx") == [QueryWord(("open",)), QueryWord(("xlsx",))]


def test_a_code_identifier_is_marked_as_the_users_own_name() -> None:
    assert query_words("where is parse_config called") == [
        QueryWord(("wher",)),
        QueryWord(("pars",), "parse_config"),
        QueryWord(("config",), "parse_config"),
        QueryWord(("call",)),
    ]
    assert [w.identifier for w in query_words("handleRequest HTTPServer")] == ["handlerequest"] * 2 + [""] * 2


def test_a_code_identifier_in_a_query_does_not_choose_the_tool(services: CatalogSnapshot) -> None:
    assert top(services, "find every usage of parse_config") == ["mcp:tree-sitter/find_usage"]
    assert top(services, "handle_request 在哪些地方被调用了") == ["mcp:tree-sitter/find_usage"]


def test_an_identifier_naming_a_capability_or_standing_alone_still_counts(services: CatalogSnapshot) -> None:
    # A guard, not a fix: what worked before the cleaning must keep working.
    assert top(services, "call git_add on the repo") == ["mcp:git/git_add"]
    assert top(services, "configure_server") == ["mcp:tree-sitter/configure"]


# -- operation verbs ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("spin up nginx container", "mcp:docker/create_container"),
        ("throw away the nginx container", "mcp:docker/delete_container"),
        ("jot down a todo: buy milk", "mcp:todoist/create_todo"),
        ("ping the team in slack", "mcp:slack/create_message"),
        ("revoke that okta api token", "mcp:okta/delete_api_token"),
        ("ship the frontend on vercel", "mcp:vercel/create_deployment"),
        ("提醒我明天交报告，加到待办", "mcp:todoist/create_todo"),
        ("存个版本", "mcp:git/git_commit"),
    ],
)
def test_a_casual_verb_names_its_operation(services: CatalogSnapshot, query: str, expected: str) -> None:
    assert top(services, query) == [expected]


def test_a_several_word_verb_is_one_unit_and_its_words_alone_mean_nothing() -> None:
    compiled = compile_keywords(KeywordIndex().with_term("spin up", ["create", "launch"]))
    assert compiled.phrases["spin up"] == {"creat": 0, "launch": 1}
    assert "up" not in compiled.latin
    units = analyse("spin up a box", compiled)
    assert [sorted(u.terms) for u in units] == [["creat", "launch"], ["box"]]
    assert [sorted(u.terms) for u in analyse("look up", compiled)] == [["look"], ["up"]]


# -- everyday vocabulary ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("miles to km", "host:convert_units"),
        ("what is 70 fahrenheit in celsius", "host:convert_units"),
        ("公里换英里", "host:convert_units"),
        ("150磅是多少公斤", "host:convert_units"),
        ("do I need an umbrella tomorrow", "mcp:openweather/"),
        ("明天北京冷不冷", "mcp:openweather/"),
    ],
)
def test_units_and_weather_stand_ins_find_their_tools(services: CatalogSnapshot, query: str, expected: str) -> None:
    # Vocabulary names the service; which of its operations is the verb's business.
    assert top(services, query)[0].startswith(expected)


def test_cleaned_queries_rank_the_same_in_every_process(services: CatalogSnapshot) -> None:
    query = "what's 6 foot 2 in meters, spin up parse_config on ec2 提醒我"
    first = rank(services.index, query)
    assert rank(services.index, query) == first
    assert [(m.identity, m.score) for m in first] == [(m.identity, m.score) for m in rank(services.index, query)]


def test_a_later_verb_does_not_pick_its_namesake_sibling() -> None:
    specs = crud("shopify", "product", "products", "Shopify store products")
    specs.append(tool("shopify", "update_product", "Update fields of an existing product in Shopify store products."))
    snapshot = build_snapshot(build_catalog(tools=specs))
    assert top(snapshot, "modify the hoodie product and drop its price") == ["mcp:shopify/update_product"]
