"""Eight ``ptc-plus demo --workspace W`` processes at once: exactly eight more families in W (issue 11, "Must show")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ptc_plus.statistics import user_store, workspace_store
from tests.scaffolding import clean_environment

CLI = str(Path(sys.executable).with_name("ptc-plus"))
PROCESSES = 8


@pytest.mark.slow
def test_eight_concurrent_demos_record_exactly_eight_families(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    xdg = tmp_path / "xdg"
    env = clean_environment(tmp_path, XDG_CONFIG_HOME=str(xdg))
    # One run first: it claims and seeds the workspace, so the eight meet a store that already holds a family.
    subprocess.run([CLI, "demo", "--workspace", str(workspace)], env=env, check=True, capture_output=True, timeout=300)
    root = workspace.resolve()
    before = workspace_store(root).read().families()
    assert before == 1
    runs = [
        subprocess.Popen(
            [CLI, "demo", "--workspace", str(workspace)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for _ in range(PROCESSES)
    ]
    outputs = [run.communicate(timeout=600)[0] for run in runs]
    assert [run.returncode for run in runs] == [0] * PROCESSES, outputs
    assert not [out for out in outputs if "Traceback" in out or "PTC-5" in out]
    workspace_view = workspace_store(root).read()
    assert workspace_view.status == "ok" and workspace_view.families() == before + PROCESSES
    # The demo's families stay out of the user-global store ([statistics] share_with_user = false).
    assert user_store({"XDG_CONFIG_HOME": str(xdg)}).read().status == "missing"
    leftovers = sorted(
        p.name for p in (root / ".ptc-plus").iterdir() if p.name not in {"config.toml", "statistics.json"}
    )
    assert leftovers == []
