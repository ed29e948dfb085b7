"""Protected paths inside the workspace: a confined program can change neither them nor their contents."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ptc_plus.runtime.protected import protected_paths
from ptc_plus.runtime.tool import run_code_definition

from .conftest import FakeServices, RuntimeFactory, outer_context

pytestmark = pytest.mark.skipif(
    not os.path.exists("/usr/bin/bwrap") and not os.path.exists("/bin/bwrap"),
    reason="bubblewrap is not installed (.ci/run installs it)",
)

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


def test_protected_paths_keeps_only_paths_inside_the_workspace(workspace: Path, tmp_path: Path) -> None:
    (workspace / "out").symlink_to(tmp_path)
    found = protected_paths(
        workspace, [workspace / "a" / "b", workspace / "a", tmp_path / "x", workspace / "out", workspace / ".." / "y"]
    )
    assert found == (workspace / ".ptc-plus", workspace / "a")
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()
