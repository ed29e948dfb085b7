"""``capabilities.*`` inside programs, through the reference host: answered by the host, never dispatched."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
import pytest_asyncio

from hookspecs import AgentRef, ToolContext, ToolDefinition, ToolResult
from hookspecs.reference import ReferenceHost, Session
from ptc_plus import discovery
from ptc_plus.capabilities import build_catalog
from ptc_plus.discovery import CatalogSnapshot, build_snapshot
from ptc_plus.runtime.code_runtime import CodeRuntime
from ptc_plus.runtime.discovery import DiscoveryProvider
from ptc_plus.runtime.protocol import DISCOVERY_METHODS
from ptc_plus.runtime.tool import run_code_definition
from ptc_plus.runtime.worker import capabilities as child_capabilities

from .conftest import limits_with, tool


def _schema(*names: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": "string", "description": f"the {name}"} for name in names},
        "required": list(names[:1]),
    }


async def _body(arguments: Any, context: ToolContext) -> Any:
    return {"tool": context.call.tool}


TOOLS = [
    tool("read_file", _body, input_schema=_schema("path", "encoding"), description="Read a text file"),
    tool("write_file", _body, input_schema=_schema("path", "content"), description="Write a text file"),
    tool("delete_branch", _body, input_schema=_schema("branch"), description="Delete a git branch"),
    tool("launch_rocket", _body, input_schema=_schema("target"), description="Launch the secret rocket"),
]


@pytest.fixture(scope="module")
def snapshot() -> CatalogSnapshot:
    return build_snapshot(build_catalog(tools=[definition.spec for definition in TOOLS]))


HostFactory = Callable[[DiscoveryProvider | None], Any]


@pytest_asyncio.fixture
async def open_session(make_reference_host: Callable[..., ReferenceHost]) -> AsyncIterator[HostFactory]:
    runtimes: list[CodeRuntime] = []
    hosts: list[ReferenceHost] = []

    async def factory(provider: DiscoveryProvider | None) -> Session:
        runtime = CodeRuntime(limits_with())
        runtimes.append(runtime)
        definitions: list[ToolDefinition] = [*TOOLS, run_code_definition(runtime=runtime, discovery=provider)]
        host = make_reference_host(tools=definitions)
        hosts.append(host)
        return await host.start_session(user_id="u", title="t")

    yield factory
    for runtime in runtimes:
        await runtime.aclose()
    for host in hosts:
        await host.aclose()


async def run(session: Session, code: str) -> ToolResult:
    return await session.call_tool("run_code", {"description": "test", "code": code})


def _provider(snapshot: CatalogSnapshot | None) -> DiscoveryProvider:
    def provide(agent: AgentRef) -> CatalogSnapshot | None:
        return snapshot

    return provide


@pytest.mark.asyncio
async def test_search_round_trip_delivers_complete_contracts_within_the_budget(
    open_session: HostFactory, snapshot: CatalogSnapshot
) -> None:
    files = {"host:read_file", "host:write_file"}
    budget = max(snapshot.costs[identity] for identity in files) + 1  # room for either contract, not both
    session = await open_session(_provider(snapshot))
    code = (
        f"found = await capabilities.search('file', budget={budget})\n"
        "names = await capabilities.find('branch', limit=3)\n"
        "seen = await capabilities.inspect(['delete_branch'])\n"
        "listing = await capabilities.tree(limit=2)\n"
        "return [found, names, seen, listing]\n"
    )
    result = await run(session, code)
    assert result.ok, result
    found, names, seen, listing = result.value["value"]
    # Exactly what the discovery API answers on the host: lossless, nothing added or lost.
    assert found == discovery.search(snapshot, "file", budget=budget)
    assert names == discovery.find(snapshot, "branch", limit=3)
    assert seen == discovery.inspect(snapshot, ["delete_branch"])
    assert listing == discovery.tree(snapshot, limit=2)
    assert found["tokens"] <= budget and snapshot.counter.count(found["text"]) == found["tokens"]
    expanded = [item["identity"] for item in found["expanded"]]
    assert len(expanded) == 1 and expanded[0] in files
    assert snapshot.get(expanded[0]).contract.strip() in found["text"]  # type: ignore[union-attr]
    other = [item for item in found["not_expanded"] if item["identity"] in files]
    assert len(other) == 1 and other[0]["reason"] == "budget-exhausted"
    assert result.value["calls"] == 0


@pytest.mark.asyncio
async def test_a_program_searches_several_phrasings_in_one_call(
    open_session: HostFactory, snapshot: CatalogSnapshot
) -> None:
    session = await open_session(_provider(snapshot))
    code = (
        "found = await capabilities.search(['read a file', 'delete a branch'], budget=2000)\n"
        "try:\n"
        "    await capabilities.search(['file'] * 9)\n"
        "except DiscoveryError as error:\n"
        "    return [found, error.code]\n"
    )
    result = await run(session, code)
    assert result.ok, result
    found, refused = result.value["value"]
    assert found == discovery.search(snapshot, ["read a file", "delete a branch"], budget=2000)
    assert found["query"] == ["read a file", "delete a branch"]
    ranked = [item["identity"] for item in (*found["expanded"], *found["not_expanded"])]
    assert "host:read_file" in ranked and "host:delete_branch" in ranked
    assert refused == "PTC-2008"
    assert result.value["calls"] == 0


@pytest.mark.asyncio
async def test_discovery_is_never_a_tool_dispatch(open_session: HostFactory, snapshot: CatalogSnapshot) -> None:
    session = await open_session(_provider(snapshot))
    code = "await capabilities.search('rocket')\nawait capabilities.tree()\nreturn await tools.read_file(path='x')\n"
    result = await run(session, code)
    assert result.ok, result
    started = [event.data for event in session.log.events if event.type == "tool-started"]
    outer = f"direct-1@{session.agent.session_id}"
    assert [(data["call_id"], data["tool"]) for data in started] == [
        (outer, "run_code"),
        (f"{outer}:ptc:1", "read_file"),  # ids count tool calls only
    ]
    assert result.value["calls"] == 1


@pytest.mark.asyncio
async def test_an_off_capability_is_absent_from_search(open_session: HostFactory, snapshot: CatalogSnapshot) -> None:
    code = "r = await capabilities.search('rocket')\nreturn [i['identity'] for i in r['expanded'] + r['not_expanded']]"
    full = await run(await open_session(_provider(snapshot)), code)
    assert full.ok and "host:launch_rocket" in full.value["value"]
    effective = [c.identity for c in snapshot.catalog.capabilities if c.identity != "host:launch_rocket"]
    restricted = await run(await open_session(_provider(snapshot.restrict(effective))), code)
    assert restricted.ok, restricted
    assert "host:launch_rocket" not in restricted.value["value"]


@pytest.mark.asyncio
@pytest.mark.parametrize("provider", [None, _provider(None)], ids=["no-provider", "provider-returns-none"])
async def test_unavailable_discovery_is_a_clear_catchable_error(
    open_session: HostFactory, provider: DiscoveryProvider | None
) -> None:
    session = await open_session(provider)
    code = (
        "try:\n"
        "    await capabilities.search('file')\n"
        "except DiscoveryError as error:\n"
        "    return [error.method, error.code, error.message, str(error)]\n"
    )
    result = await run(session, code)
    assert result.ok, result
    method, code_, text, shown = result.value["value"]
    assert (method, code_) == ("search", "PTC-2005")
    assert "unavailable in this session" in text and "unavailable in this session" in shown


@pytest.mark.asyncio
async def test_bad_arguments_reach_the_program_with_their_code(
    open_session: HostFactory, snapshot: CatalogSnapshot
) -> None:
    session = await open_session(_provider(snapshot))
    code = (
        "caught = []\n"
        "for call in (lambda: capabilities.search('x', budget=-1), lambda: capabilities.find('x', limit=0),\n"
        "             lambda: capabilities.inspect([1, 2]), lambda: capabilities.tree(limit='all')):\n"
        "    try:\n"
        "        await call()\n"
        "    except DiscoveryError as error:\n"
        "        caught.append([error.method, error.code])\n"
        "try:\n"
        "    await capabilities.search(float('nan'))\n"
        "except TypeError as error:\n"
        "    caught.append('not lossless' in str(error))\n"
        "return caught\n"
    )
    result = await run(session, code)
    assert result.ok, result
    assert result.value["value"] == [
        ["search", "PTC-3101"],
        ["find", "PTC-3105"],
        ["inspect", "PTC-3105"],
        ["tree", "PTC-3105"],
        True,
    ]


@pytest.mark.asyncio
async def test_a_broken_provider_does_not_fail_the_run(open_session: HostFactory) -> None:
    def broken(agent: AgentRef) -> CatalogSnapshot | None:
        raise RuntimeError("catalog exploded")

    session = await open_session(broken)
    code = (
        "try:\n    await capabilities.tree()\nexcept DiscoveryError as error:\n    return [error.code, error.message]\n"
    )
    result = await run(session, code)
    assert result.ok, result
    assert result.value["value"][0] == "PTC-2006" and "catalog exploded" in result.value["value"][1]


@pytest.mark.asyncio
async def test_capabilities_object_is_fixed(open_session: HostFactory) -> None:
    session = await open_session(None)
    code = (
        "out = [sorted(dir(capabilities)), type(capabilities).__name__]\n"
        "for probe in ('capabilities.searchh', 'capabilities.__wrapped__', 'capabilities.x'):\n"
        "    try:\n"
        "        eval(probe)\n"
        "    except AttributeError as error:\n"
        "        out.append(str(error))\n"
        "try:\n"
        "    capabilities.search = None\n"
        "except AttributeError as error:\n"
        "    out.append(str(error))\n"
        "return out\n"
    )
    result = await run(session, code)
    assert result.ok, result
    listed, type_name, typo, dunder, unknown, assign = result.value["value"]
    assert listed == ["find", "inspect", "search", "tree"] and type_name == "capabilities"
    assert "'searchh'" in typo and "search" in typo
    assert "'__wrapped__'" in dunder and "'x'" in unknown
    assert "read-only" in assign


def test_child_signatures_match_the_discovery_api() -> None:
    async def discover(method: str, args: dict[str, Any]) -> Any:
        return None

    namespace = child_capabilities.build_capabilities(discover)
    for method, names in DISCOVERY_METHODS.items():
        host = inspect.signature(getattr(discovery, method))
        child = inspect.signature(getattr(namespace, method))
        expected = [(p.name, p.kind, p.default) for p in list(host.parameters.values())[1:]]  # minus the snapshot
        assert [(p.name, p.kind, p.default) for p in child.parameters.values()] == expected
        assert {p.name for p in child.parameters.values()} == names
    assert set(DISCOVERY_METHODS) == set(child_capabilities.METHODS)


@pytest.mark.asyncio
async def test_an_answer_over_the_message_limit_is_a_catchable_error(
    snapshot: CatalogSnapshot, workspace: Path
) -> None:
    answer = discovery.inspect(snapshot, ["read_file", "write_file", "delete_branch"], budget=100_000)
    size = len(orjson.dumps({"type": "reply", "id": 1, "ok": True, "value": answer})) + 4
    code = (
        "names = ['read_file', 'write_file', 'delete_branch']\n"
        "small = await capabilities.inspect(names[:1], budget=100000)\n"
        "try:\n"
        "    await capabilities.inspect(names, budget=100000)\n"
        "except DiscoveryError as error:\n"
        "    return [small['expanded'][0]['name'], error.code]\n"
    )
    runtime = CodeRuntime(limits_with(max_message_bytes=size - 1))
    try:
        outcome = await runtime.run(code, workspace=workspace, discovery=snapshot)
    finally:
        await runtime.aclose()
    assert outcome.ok, outcome.to_json()
    assert outcome.value == ["read_file", "result-too-large"]
