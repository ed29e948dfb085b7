"""A workspace file may only tighten the sandbox; loosening comes only from the user file (ADR 0045, 0086)."""

from __future__ import annotations

import pytest

from ptc_plus.config import RuntimeSection, SandboxPolicy

from .conftest import ConfigFiles

LOOSE = '[runtime]\npolicy = "danger-full-access"\nnetwork = true\n'


def test_a_workspace_cannot_loosen_the_default_sandbox(files: ConfigFiles) -> None:
    files.write(workspace=LOOSE + "timeout_s = 30\n")
    loaded = files.load()
    runtime = loaded.config.runtime
    assert (runtime.policy, runtime.network) == (SandboxPolicy.WORKSPACE_WRITE, False)
    assert runtime.timeout_s == 30  # other runtime keys still count
    assert [(i.file, i.path, i.reason) for i in loaded.issues] == [
        (str(files.workspace_file), "runtime.policy", "loosening"),
        (str(files.workspace_file), "runtime.network", "loosening"),
    ]
    english, chinese = loaded.issues[0].message("en"), loaded.issues[0].message("zh")
    assert "may only tighten" in english and "danger-full-access" in english and "workspace-write" in english
    assert "只能收紧" in chinese and "danger-full-access" in chinese
    assert "runtime.policy" not in loaded.origins


def test_a_workspace_cannot_loosen_what_the_user_file_grants(files: ConfigFiles) -> None:
    files.write(user='[runtime]\npolicy = "read-only"\n', workspace='[runtime]\npolicy = "workspace-write"\n')
    loaded = files.load()
    assert loaded.config.runtime.policy is SandboxPolicy.READ_ONLY
    (issue,) = loaded.issues
    assert issue.path == "runtime.policy" and issue.params == {"value": "workspace-write", "kept": "read-only"}


def test_the_user_file_may_loosen(files: ConfigFiles) -> None:
    files.write(user=LOOSE)
    loaded = files.load()
    assert (loaded.config.runtime.policy, loaded.config.runtime.network) == (SandboxPolicy.DANGER_FULL_ACCESS, True)
    assert loaded.issues == ()


@pytest.mark.parametrize(
    ("workspace", "policy", "network"),
    [
        ('policy = "danger-full-access"\nnetwork = true\n', SandboxPolicy.DANGER_FULL_ACCESS, True),  # equal is fine
        ('policy = "workspace-write"\n', SandboxPolicy.WORKSPACE_WRITE, True),
        ('policy = "read-only"\nnetwork = false\n', SandboxPolicy.READ_ONLY, False),
    ],
)
def test_a_workspace_may_tighten_or_repeat(
    files: ConfigFiles, workspace: str, policy: SandboxPolicy, network: bool
) -> None:
    files.write(user=LOOSE, workspace="[runtime]\n" + workspace)
    loaded = files.load()
    assert loaded.issues == ()
    assert (loaded.config.runtime.policy, loaded.config.runtime.network) == (policy, network)


def test_an_unreadable_user_file_leaves_the_workspace_only_the_defaults_to_tighten(files: ConfigFiles) -> None:
    files.write(user="[runtime\n", workspace=LOOSE)
    runtime = files.load().config.runtime
    assert (runtime.policy, runtime.network) == (RuntimeSection().policy, RuntimeSection().network)


def test_a_workspace_may_choose_gvisor_over_bubblewrap_but_never_the_reverse(files: ConfigFiles) -> None:
    # ADR 0127: executors rank by the strength of their boundary; a repository may only raise it.
    files.write(workspace='[runtime]\nexecutor = "gvisor"\n')
    loaded = files.load()
    assert loaded.issues == () and loaded.config.runtime.executor == "gvisor"
    files.write(user='[runtime]\nexecutor = "gvisor"\n', workspace='[runtime]\nexecutor = "bubblewrap"\n')
    loaded = files.load()
    assert loaded.config.runtime.executor == "gvisor"
    (issue,) = loaded.issues
    assert (issue.path, issue.reason) == ("runtime.executor", "loosening")
    assert issue.params == {"value": "bubblewrap", "kept": "gvisor"}
    assert "gvisor" in issue.message("zh")
