"""Protected paths inside the workspace: a confined program can change neither them nor their contents."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookspecs.reference import ReferenceHost
from hookspecs.reference.demo_tools import demo_tool_definitions
from ptc_plus.config import WORKSPACE_DIR
from ptc_plus.runtime.protected import protected_paths
from ptc_plus.runtime.tool import run_code_definition

from .conftest import FakeServices, RuntimeFactory, outer_context

pytestmark = pytest.mark.needs_bwrap

ATTACKS = {
    "overwrite": "open({file!r}, 'w').write('policy = \"danger-full-access\"')",
    "append": "open({file!r}, 'a').write('x')",
    "create": "open({dir!r} + '/new.toml', 'w').write('x')",
    "rename-file": "os.rename({file!r}, {dir!r} + '/moved')",
    "delete-file": "os.unlink({file!r})",
    "rename-dir": "os.rename({dir!r}, {dir!r} + '.old')",
    "delete-dir": "shutil.rmtree({dir!r})",
    "symlink-swap": "os.rename({dir!r}, 'gone'); os.symlink('/tmp', {dir!r})",
    "chmod": "os.chmod({file!r}, 0o777)",
}


def _program(directory: Path, file: Path) -> str:
    lines = ["import os, shutil", "results = {}"]
    for name, attack in ATTACKS.items():
        action = attack.format(file=str(file), dir=str(directory))
        lines += [
            "try:",
            f"    {action}",
            f"    results[{name!r}] = 'allowed'",
            "except OSError as error:",
            f"    results[{name!r}] = 'refused'",
        ]
    lines += ["try:", "    open('elsewhere.txt', 'w').write('fine')", "except OSError:", "    pass", "return results"]
    return "\n".join(lines) + "\n"


def _snapshot(directory: Path) -> dict[str, tuple[str, int]]:
    return {
        str(path.relative_to(directory)): (path.read_text(), path.stat().st_mode)
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


@pytest.mark.asyncio
@pytest.mark.parametrize("policy", ("workspace-write", "read-only"))
async def test_plugin_config_and_host_state_cannot_be_changed(
    make_runtime: RuntimeFactory, workspace: Path, policy: str
) -> None:
    config = workspace / ".ptc-plus"
    config.mkdir()
    (config / "config.toml").write_text('[runtime]\npolicy = "workspace-write"\n')
    state = workspace / ".agent-host"
    (state / "sessions").mkdir(parents=True)
    (state / "sessions" / "s1.jsonl").write_text('{"disclosure":"off"}\n')
    services = FakeServices(workspace, protected_paths=[state, Path("/somewhere/outside")])
    definition = run_code_definition(runtime=make_runtime(policy=policy))
    for directory, file in ((config, config / "config.toml"), (state, state / "sessions" / "s1.jsonl")):
        before = _snapshot(directory)
        value = await definition.handler(
            {"description": "d", "code": _program(directory, file)}, outer_context(services)
        )
        assert isinstance(value, dict)
        assert value["value"] == dict.fromkeys(ATTACKS, "refused"), (directory, value)
        assert _snapshot(directory) == before
        assert directory.is_dir() and not directory.is_symlink()
        assert not (workspace / "gone").exists()
        if policy == "workspace-write":
            assert (workspace / "elsewhere.txt").read_text() == "fine"


@pytest.mark.asyncio
async def test_missing_protected_paths_are_created_before_the_run(
    make_runtime: RuntimeFactory, workspace: Path
) -> None:
    runtime = make_runtime(policy="workspace-write")
    code = "import os\nos.symlink('/tmp', '.agent-host/sessions')\n"
    outcome = await runtime.run(code, workspace=workspace, protected=[workspace / ".agent-host"])
    assert outcome.failure is not None and outcome.failure.params["type"] in ("OSError", "PermissionError")
    assert (workspace / ".agent-host").is_dir() and list((workspace / ".agent-host").iterdir()) == []
    assert (workspace / ".ptc-plus").is_dir()


@pytest.mark.asyncio
async def test_a_nested_protected_path_cannot_be_carried_away_by_its_parent(
    make_runtime: RuntimeFactory, workspace: Path
) -> None:
    state = workspace / "a" / "state"
    state.mkdir(parents=True)
    (state / "log").write_text("host")
    code = (
        "import os, shutil\nresults = {}\n"
        "for name, attack in (('rename', lambda: os.rename('a', 'moved')), ('delete', lambda: shutil.rmtree('a'))):\n"
        "    try:\n        attack()\n        results[name] = 'allowed'\n"
        "    except OSError:\n        results[name] = 'refused'\n"
        "open('a/other', 'w').write('fine')\n"
        "return results\n"
    )
    outcome = await make_runtime(policy="workspace-write").run(code, workspace=workspace, protected=[state])
    assert outcome.value == {"rename": "refused", "delete": "refused"}, outcome
    assert (state / "log").read_text() == "host" and not state.is_symlink()
    assert (workspace / "a" / "other").read_text() == "fine"  # the parent itself stays writable


def test_protected_paths_keeps_only_paths_inside_the_workspace(workspace: Path, tmp_path: Path) -> None:
    (workspace / "out").symlink_to(tmp_path)
    found = protected_paths(
        workspace,
        [
            WORKSPACE_DIR,
            workspace / "a" / "b",
            workspace / "a",
            tmp_path / "x",
            workspace / "out",
            workspace / ".." / "y",
        ],
    )
    assert found == (workspace / ".ptc-plus", workspace / "a")
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


# --- ADR 0050: the repository's git state, and creating missing paths beneath the workspace ------------------

GIT_ATTACKS = {
    "plant-hook": "open('.git/hooks/pre-commit', 'w').write('#!/bin/sh\\ntouch /tmp/owned\\n')",
    "rewrite-config": "open('.git/config', 'a').write('[core]\\n\\tfsmonitor = ./evil\\n')",
    "hooks-path": "os.rename('.git/hooks', '.git/hooks-old')",
    # Renaming the parent would carry any protection of .git/hooks alone away with it.
    "replace-git-dir": (
        "os.rename('.git', 'git-old'); os.makedirs('.git/hooks');"
        " open('.git/hooks/pre-commit', 'w').write('#!/bin/sh\\n')"
    ),
    "delete-git-dir": "shutil.rmtree('.git')",
}


def _git_program() -> str:
    lines = ["import os, shutil", "results = {}"]
    for name, attack in GIT_ATTACKS.items():
        lines += [
            "try:",
            f"    {attack}",
            f"    results[{name!r}] = 'allowed'",
            "except OSError:",
            f"    results[{name!r}] = 'refused'",
        ]
    return "\n".join([*lines, "return results"]) + "\n"


def _fake_repository(workspace: Path) -> None:
    """The layout `git init` leaves (without needing git on the machine)."""
    git = workspace / ".git"
    for directory in ("hooks", "info", "objects/info", "objects/pack", "refs/heads", "refs/tags"):
        (git / directory).mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "config").write_text("[core]\n\trepositoryformatversion = 0\n\tbare = false\n")
    (git / "hooks" / "pre-commit.sample").write_text("#!/bin/sh\nexit 0\n")


@pytest.mark.asyncio
async def test_a_repositorys_git_state_cannot_be_changed(make_runtime: RuntimeFactory, workspace: Path) -> None:
    _fake_repository(workspace)
    before = _snapshot(workspace / ".git")
    services = FakeServices(workspace)
    definition = run_code_definition(runtime=make_runtime(policy="workspace-write"))
    value = await definition.handler({"description": "d", "code": _git_program()}, outer_context(services))
    assert isinstance(value, dict)
    assert value["value"] == dict.fromkeys(GIT_ATTACKS, "refused"), value
    assert _snapshot(workspace / ".git") == before
    assert (workspace / ".git").is_dir() and not (workspace / "git-old").exists()


@pytest.mark.asyncio
async def test_a_worktree_gitfile_cannot_be_repointed(make_runtime: RuntimeFactory, workspace: Path) -> None:
    # In a linked worktree or a submodule, .git is a file naming the real git directory.
    (workspace / ".git").write_text("gitdir: /somewhere/else/.git/worktrees/w\n")
    code = "open('.git', 'w').write('gitdir: planted')\n"
    outcome = await make_runtime(policy="workspace-write").run(code, workspace=workspace)
    assert outcome.failure is not None
    assert (workspace / ".git").read_text() == "gitdir: /somewhere/else/.git/worktrees/w\n"


def test_git_state_is_protected_only_where_it_exists(workspace: Path) -> None:
    assert protected_paths(workspace, [WORKSPACE_DIR]) == (workspace / ".ptc-plus",)
    assert not (workspace / ".git").exists()  # a workspace that is no repository is not made one
    _fake_repository(workspace)
    assert protected_paths(workspace, [WORKSPACE_DIR]) == (workspace / ".git", workspace / ".ptc-plus")


def test_the_runtime_protects_only_what_it_is_handed(workspace: Path) -> None:
    """The runtime reads no config (ADR 0057): the plugin's ``.ptc-plus`` is protected because the session
    hands it in, as ``owner_paths`` of the runtime."""
    assert protected_paths(workspace) == ()
    assert not (workspace / ".ptc-plus").exists()
    assert protected_paths(workspace, ["state"]) == (workspace / "state",)


def test_missing_paths_are_never_created_through_a_symlink(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / "a").symlink_to(outside)
    found = protected_paths(workspace, [WORKSPACE_DIR, workspace / "a" / "state"])
    assert found == (workspace / ".ptc-plus",)
    assert list(outside.iterdir()) == []


@pytest.mark.asyncio
@pytest.mark.parametrize("store", ("fresh", "existing"))
async def test_the_demo_tools_state_and_git_state_stay_out_of_a_programs_reach(
    make_runtime: RuntimeFactory, workspace: Path, tmp_path: Path, store: str
) -> None:
    """The attack of issue 8 item 4, end to end: make ``.demo`` a symlink out, then call ``notes_add``."""
    outside = tmp_path / "outside"
    outside.mkdir()
    _fake_repository(workspace)
    code = f"""
import os
results = {{}}
try:
    if os.path.lexists('.demo'):
        os.rename('.demo', 'demo-old')
    os.symlink({str(outside)!r}, '.demo')
    results['swap'] = 'allowed'
except OSError:
    results['swap'] = 'refused'
results['note'] = await tools.notes_add(title='t', body='b')
for path in ('.demo/notes.sqlite', '.git/hooks/pre-commit', '.ptc-plus/config.toml', '.agent-host/x'):
    try:
        await tools.write_file(path=path, content='planted')
        results[path] = 'allowed'
    except ToolCallError as error:
        results[path] = error.code
return results
"""
    runtime = make_runtime(policy="workspace-write")
    tools = [*demo_tool_definitions(workspace), run_code_definition(runtime=runtime)]
    async with ReferenceHost(workspace=workspace, tools=tools, load_entry_points=False) as host:
        session = await host.start_session(user_id="u", title="t")
        if store == "existing":
            assert (await session.call_tool("notes_add", {"title": "before", "body": "b"})).ok
        result = await session.call_tool("run_code", {"description": "d", "code": code})
    assert result.ok, result
    assert result.value["value"] == {
        "swap": "refused",
        "note": {"id": 1 if store == "fresh" else 2},
        ".demo/notes.sqlite": "protected-path",
        ".git/hooks/pre-commit": "protected-path",
        ".ptc-plus/config.toml": "protected-path",
        ".agent-host/x": "protected-path",
    }
    assert list(outside.iterdir()) == []
    assert (workspace / ".demo" / "notes.sqlite").is_file() and not (workspace / ".demo").is_symlink()
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()


def test_the_reference_host_protects_the_demo_store_only_with_the_demo_tools(workspace: Path) -> None:
    with_demo = ReferenceHost(workspace=workspace, tools=demo_tool_definitions(workspace), load_entry_points=False)
    assert list(with_demo.services.protected_paths) == [workspace / ".agent-host", workspace / ".demo"]
    without = ReferenceHost(workspace=workspace, load_entry_points=False)
    assert list(without.services.protected_paths) == [workspace / ".agent-host"]
