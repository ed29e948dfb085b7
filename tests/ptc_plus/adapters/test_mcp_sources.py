"""MCP servers as capability sources, end to end through a real reference host (ADR 0072).

Real servers: the fixture (``mcp_fixture_server.py``), ``mcp-server-time`` and
``mcp-server-git`` on a temporary repository. Programs reach their tools as
``tools.<name>`` and their resources through ``resources``; the plan, the
guard and discovery treat them like host tools.
"""

# ruff: noqa: F811 - the fixtures are imported from mcp_support (this directory has no conftest of its own)
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hookspecs.reference import ReferenceHost
from ptc_plus.plugin import controller
from tests.ptc_plus.session.conftest import HostFactory, plan_of, program_turns, state_of, write_config

from .mcp_support import (  # noqa: F401 - fixtures
    BIN,
    FIXTURE,
    configure,
    fixture_table,
    isolated_env,
    mark,
    open_host,
    server_table,
    settled_values,
    workspace,
)

PARALLEL = """
import asyncio
total, now = await asyncio.gather(tools.add(a=2, b=3), tools.get_current_time(timezone="UTC"))
listing = await tools.list_files(path="docs")
readme = await resources.read("fixture://readme")
note = await resources.read("fixture://notes/run")
listed = await resources.list("fixture")
try:
    await tools.fail(reason="no")
    caught = None
except ToolCallError as error:
    caught = [error.tool_name, error.code, error.message]
return {"total": total, "tz": now["timezone"], "files": listing, "readme": readme["text"], "note": note["text"],
        "listed": [r["uri"] for r in listed["resources"]],
        "templates": [t["uri_template"] for t in listed["templates"]], "caught": caught}
"""


async def started(open_host: HostFactory, code: str) -> tuple[ReferenceHost, object]:
    host = await open_host()
    session = await host.start_session(title="t", model=program_turns(code))
    await session.run_turn("go")
    return host, session


@pytest.mark.asyncio
async def test_a_program_calls_two_mcp_tools_in_parallel_a_host_tool_reads_resources_and_catches_is_error(
    open_host: HostFactory, workspace: Path, tmp_path: Path, mark: str
) -> None:
    configure(tmp_path, fixture_table(mark), server_table("time", str(BIN / "mcp-server-time"), []))
    write_config(workspace, budget=100_000)
    host, session = await started(open_host, PARALLEL)
    value = settled_values(session)
    assert value["total"] == {"total": 5}  # structured_content is the value
    assert value["tz"] == "UTC"
    assert "routes.md" in str(value["files"])
    assert value["readme"] == "hello from the fixture"
    assert value["note"] == "note run"
    assert value["listed"] == ["fixture://readme"] and value["templates"] == ["fixture://notes/{name}"]
    name, code, text = value["caught"]  # type: ignore[misc]
    assert (name, code) == ("fail", "PTC-7005") and "mcp:fixture/fail" in text
    plan = plan_of(host, session)  # type: ignore[arg-type]
    identities = {e.identity for e in plan.effective()}
    assert {"mcp:fixture/add", "mcp:time/get_current_time", "mcp-resources:fixture"} <= identities


@pytest.mark.asyncio
async def test_tools_carry_their_schemas_and_the_server_instructions(
    open_host: HostFactory, workspace: Path, tmp_path: Path, mark: str
) -> None:
    configure(tmp_path, fixture_table(mark))
    host = await open_host()
    session = await host.start_session(title="t", model=program_turns("return 1"))
    spec = next(s for s in host.view(session.agent).specs() if s.name == "add")
    assert spec.identity == "mcp:fixture/add"
    assert spec.output_schema is not None and "total" in spec.output_schema["properties"]
    assert spec.input_schema["required"] == ["a", "b"]
    assert "Fixture server: numbers are integers." in spec.description
    catalog = state_of(host, session).catalog  # type: ignore[arg-type]
    resources = catalog.get("mcp-resources:fixture")
    assert resources is not None and 'resources.list("fixture")' in resources.contract


@pytest.mark.asyncio
async def test_a_server_killed_mid_call_gives_a_clear_error_and_the_next_call_restarts_it(
    open_host: HostFactory, workspace: Path, tmp_path: Path, mark: str
) -> None:
    configure(tmp_path, fixture_table(mark))
    code = """
first = await tools.pid()
try:
    await tools.die()
except ToolCallError as error:
    died = [error.tool_name, error.code, error.message]
second = await tools.pid()
return {"first": first["pid"], "second": second["pid"], "died": died}
"""
    _host, session = await started(open_host, code)
    value = settled_values(session)
    name, code_, text = value["died"]  # type: ignore[misc]
    assert (name, code_) == ("die", "PTC-7002") and "fixture" in text
    assert value["first"] != value["second"]  # a new process answered


@pytest.mark.asyncio
async def test_a_request_past_timeout_ends_cleanly_and_the_server_keeps_serving(
    open_host: HostFactory, workspace: Path, tmp_path: Path, mark: str
) -> None:
    # timeout_s ends the hang; the start has its own bound (start_timeout_s, 60 s), and 5 s is room for `add`
    configure(tmp_path, fixture_table(mark, timeout_s=5))
    code = """
try:
    await tools.hang()
except ToolCallError as error:
    late = [error.tool_name, error.code]
return {"late": late, "after": await tools.add(a=1, b=1)}
"""
    _host, session = await started(open_host, code)
    assert settled_values(session) == {"late": ["hang", "PTC-7003"], "after": {"total": 2}}


@pytest.mark.asyncio
async def test_a_user_file_server_starts_in_the_home_not_in_the_workspace(
    open_host: HostFactory, workspace: Path, tmp_path: Path, mark: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A user's ``python -m X`` must not run a repository's ``X.py``: its default cwd is neutral (ADR 0093)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    configure(tmp_path, fixture_table(mark))
    _host, session = await started(open_host, "return await tools.pid()")
    assert settled_values(session)["cwd"] == str(home)


@pytest.mark.asyncio
async def test_a_repository_module_named_like_a_user_servers_module_never_runs(
    open_host: HostFactory, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A planted ``X.py`` in the workspace is not what the user's ``python -m X`` server runs."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    planted = tmp_path / "planted-ran"
    (workspace / "ptc_user_server_x.py").write_text(f"open({str(planted)!r}, 'w').close()\n", encoding="utf-8")
    configure(tmp_path, server_table("x", sys.executable, ["-m", "ptc_user_server_x"]))
    _host, session = await started(open_host, "return 1")
    diagnostics = state_of(_host, session).diagnostics  # type: ignore[arg-type]
    assert any("MCP server x" in d for d in diagnostics), diagnostics  # it was tried: no such module at home
    assert not planted.exists()


@pytest.mark.asyncio
async def test_a_server_that_cannot_start_is_a_diagnostic_not_a_broken_session(
    open_host: HostFactory, workspace: Path, tmp_path: Path, mark: str
) -> None:
    configure(tmp_path, fixture_table(mark), server_table("missing", str(tmp_path / "no-such-server"), []))
    _host, session = await started(open_host, "return await tools.add(a=1, b=2)")
    assert settled_values(session) == {"total": 3}
    assert any("PTC-7001" in d or "missing" in d for d in state_of(_host, session).diagnostics)  # type: ignore[arg-type]


@pytest.mark.asyncio
async def test_tools_list_changed_stays_out_of_the_frozen_plan_until_a_refresh(
    open_host: HostFactory, workspace: Path, tmp_path: Path, mark: str
) -> None:
    configure(tmp_path, fixture_table(mark))
    write_config(workspace, budget=100_000)
    host, session = await started(open_host, "return await tools.grow()")
    host.invalidate_views()
    assert "late_tool" in host.view(session.agent).names()  # the hub re-listed...
    refused = await session.call_tool("late_tool", {})
    assert refused.error is not None and "capability-off" in refused.error.message  # ...the plan did not
    receipt = controller(host.services).refresh(session.agent)
    assert receipt.status == "applied", receipt.text
    assert plan_of(host, session).entry("mcp:fixture/late_tool") is not None  # type: ignore[arg-type]


@pytest.mark.asyncio
async def test_an_on_demand_resource_source_whose_declaration_changed_is_revised_by_a_refresh(
    open_host: HostFactory, workspace: Path, tmp_path: Path, mark: str
) -> None:
    """The server comes back declaring other instructions: its resource source's contract moved (ADR 0090)."""
    source = "mcp-resources:fixture"
    configure(tmp_path, fixture_table(mark))
    write_config(workspace, choices={source: "on-demand"})
    host, session = await started(open_host, "return 1")
    ctl = controller(host.services)
    entry = plan_of(host, session).entry(source)  # type: ignore[arg-type]
    assert entry is not None and entry.disclosure == "on-demand"
    snapshot = ctl.discovery(session.agent)  # type: ignore[attr-defined]
    assert snapshot is not None and "integers" in snapshot.get(source).contract

    revised = server_table("fixture", sys.executable, [str(FIXTURE), mark, "Fixture server: numbers are decimals."])
    configure(tmp_path, revised)
    receipt = ctl.refresh(session.agent)  # type: ignore[attr-defined]
    assert receipt.status == "applied", receipt.text
    assert source in [c["identity"] for c in receipt.data["diff"]["revised"]]
    now = ctl.discovery(session.agent)  # type: ignore[attr-defined]
    assert now is not None and "decimals" in now.get(source).contract
    entry = plan_of(host, session).entry(source)  # type: ignore[arg-type]
    assert entry is not None and entry.revision == now.get(source).revision and entry.disclosure == "on-demand"


@pytest.mark.asyncio
async def test_git_server_on_a_temporary_repository(open_host: HostFactory, workspace: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.txt").write_text("a\n", encoding="utf-8")
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first commit"], check=True)
    (repo / "b.txt").write_text("b\n", encoding="utf-8")
    configure(tmp_path, server_table("git", str(BIN / "mcp-server-git"), ["--repository", str(repo)]))
    code = f"""
import asyncio
status, log = await asyncio.gather(tools.git_status(repo_path={str(repo)!r}), tools.git_log(repo_path={str(repo)!r}))
return {{"status": status, "log": log}}
"""
    _host, session = await started(open_host, code)
    value = settled_values(session)
    assert "b.txt" in str(value["status"]) and "first commit" in str(value["log"])
