"""``ptc-plus stats`` and ``stats reset``: the numbers per capability, damaged stores, and asking before deleting."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ptc_plus.statistics import Evidence, FamilySample, derive_shape, user_store, workspace_store
from tests.cli_runner import CliRunner
from tests.scaffolding import clean_environment
from tests.statistics_samples import record_families

CLI = str(Path(sys.executable).with_name("ptc-plus"))
CONVERTER, READER, SEARCH = "host:convert_units", "host:read_file", "host:search_files"


def rows(document: dict[str, Any]) -> dict[str, tuple[Any, ...]]:
    return {
        row["identity"]: (row["available"], row["used"], row["coverage"], row["scope"], row["reason"])
        for row in document["capabilities"]
    }


def configure(workspace: Path) -> None:
    path = workspace / ".ptc-plus" / "config.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text("version = 1\n[statistics]\nwindow = 4\nmin_samples = 3\n", "utf-8")


def test_numbers_per_capability_with_the_workspace_first(workspace: Path, run_cli: CliRunner) -> None:
    configure(workspace)
    # Five families, the window holds the newest four: the converter was used in f2..f5, the reader only in f1.
    record_families(workspace_store(workspace), workspace, ["f1"], [READER, SEARCH])
    record_families(workspace_store(workspace), workspace, ["f2", "f3", "f4", "f5"], [CONVERTER, SEARCH])
    record_families(
        workspace_store(workspace), workspace, ["f6"], [], available=[SEARCH]
    )  # the converter absent: no dilution
    done = run_cli("stats", "--workspace", str(workspace), "--json")
    assert done.code == 0, done.err
    document = done.json()
    assert (document["scope"], document["window"], document["min_samples"], document["enabled"]) == (
        "both",
        4,
        3,
        True,
    )
    got = rows(document)
    assert got[CONVERTER] == (4, 4, 1.0, "workspace", "sufficient")
    assert got[READER] == (4, 0, 0.0, "workspace", "sufficient")  # a long-available, never-used one: 0 %
    assert got[SEARCH] == (4, 3, 0.75, "workspace", "sufficient")
    stores = {store["scope"]: (store["status"], store["families"]) for store in document["stores"]}
    assert stores == {"workspace": ("ok", 6), "user": ("missing", None)}
    text = run_cli("stats", "--workspace", str(workspace))
    assert text.code == 0
    assert (
        "host:convert_units: used in 4 of 4 families, coverage 100%, scope workspace: "
        "enough samples: workspace statistics vote"
    ) in text.out


def test_no_sample_below_minimum_and_the_user_fallback(workspace: Path, run_cli: CliRunner) -> None:
    configure(workspace)
    record_families(workspace_store(workspace), workspace, ["f1", "f2"], [CONVERTER], available=[CONVERTER, READER])
    record_families(user_store(), workspace, ["u1", "u2", "u3"], [CONVERTER])
    got = rows(run_cli("stats", "--workspace", str(workspace), "--json").json())
    assert got[CONVERTER] == (3, 3, 1.0, "user", "fallback")
    assert got[READER] == (3, 0, 0.0, "user", "fallback")
    assert got[SEARCH] == (3, 0, 0.0, "user", "fallback")
    workspace_only = rows(run_cli("stats", "--workspace", str(workspace), "--scope", "workspace", "--json").json())
    assert workspace_only[CONVERTER] == (2, 2, 1.0, "workspace", "below-minimum")
    assert workspace_only[SEARCH] == (0, 0, None, "workspace", "no-sample")  # "no sample", never 0 %
    text = run_cli("stats", "--workspace", str(workspace))
    assert "fallback: the workspace has 2 of 3 samples, so user-global statistics vote" in text.out


def test_a_capability_only_the_store_knows_is_listed(workspace: Path, run_cli: CliRunner) -> None:
    sample = FamilySample(
        family_id="f1",
        workspace=str(workspace),
        plan_config_revision="sha256:t",
        evidence=[Evidence(identity="mcp:github/create_issue", revision="sha256:1", disclosure="full", used=True)],
    )
    workspace_store(workspace).record(sample)
    got = rows(run_cli("stats", "--workspace", str(workspace), "--scope", "workspace", "--json").json())
    assert got["mcp:github/create_issue"] == (1, 1, 1.0, "workspace", "below-minimum")


@pytest.mark.parametrize(
    ("content", "code"),
    [(b'{"version": 1, "fam', "PTC-5002"), (b"\xff\x00", "PTC-5002"), (b'{"version": 7}', "PTC-5003")],
    ids=["truncated", "garbage", "future-version"],
)
def test_a_damaged_workspace_store_is_an_error_with_its_own_code(
    workspace: Path, run_cli: CliRunner, content: bytes, code: str
) -> None:
    path = workspace_store(workspace).path
    path.parent.mkdir()
    path.write_bytes(content)
    done = run_cli("stats", "--workspace", str(workspace))
    assert done.code == 1 and "Traceback" not in done.err
    assert done.err.startswith(f"ptc-plus: {code}: ")
    under_json = run_cli("stats", "--workspace", str(workspace), "--json")
    assert (under_json.code, under_json.json()["error"]["code"]) == (1, code)
    assert run_cli("stats", "--workspace", str(workspace), "--scope", "user").code == 0  # the other scope still shows
    assert path.read_bytes() == content


def test_a_damaged_user_store_only_costs_the_fallback(workspace: Path, run_cli: CliRunner) -> None:
    configure(workspace)
    record_families(workspace_store(workspace), workspace, ["f1", "f2", "f3"], [SEARCH])
    user = user_store().path
    user.parent.mkdir(parents=True)
    user.write_bytes(b"[]")
    done = run_cli("stats", "--workspace", str(workspace))
    assert done.code == 0 and "ptc-plus: PTC-5002: " in done.err and "user-global fallback has no vote" in done.err
    document = run_cli("stats", "--workspace", str(workspace), "--json").json()
    assert [problem["code"] for problem in document["problems"]] == ["PTC-5002"]
    assert rows(document)[SEARCH] == (3, 3, 1.0, "workspace", "sufficient")
    assert {store["scope"]: store["status"] for store in document["stores"]}["user"] == "unreadable"
    assert run_cli("stats", "--workspace", str(workspace), "--scope", "user").code == 1


def test_reset_with_yes_deletes_one_scope(workspace: Path, run_cli: CliRunner) -> None:
    record_families(workspace_store(workspace), workspace, ["f1"], [SEARCH])
    record_families(user_store(), workspace, ["u1"], [SEARCH])
    done = run_cli("stats", "reset", "--workspace", str(workspace), "--yes")
    assert done.code == 0 and "Deleted the workspace usage statistics" in done.out
    assert not workspace_store(workspace).path.exists() and user_store().path.exists()
    assert run_cli("stats", "reset", "--workspace", str(workspace), "--scope", "user", "-y").code == 0
    assert not user_store().path.exists()


def test_reset_refuses_without_a_terminal_and_without_yes(workspace: Path, run_cli: CliRunner) -> None:
    record_families(workspace_store(workspace), workspace, ["f1"], [SEARCH])
    done = run_cli("stats", "reset", "--workspace", str(workspace), stdin="y\n")
    assert done.code == 2 and "PTC-1001" in done.err and "--yes" in done.err
    assert done.err.startswith("Usage: ptc-plus stats reset")
    assert workspace_store(workspace).path.exists()


def _on_a_terminal(argv: list[str], answer: bytes, env: dict[str, str]) -> tuple[int, str]:
    """Run the real ``ptc-plus`` with a pseudo-terminal as standard input and output; type ``answer`` at the prompt."""
    leader, follower = pty.openpty()
    child = subprocess.Popen([CLI, *argv], stdin=follower, stdout=follower, stderr=follower, env=env)
    os.close(follower)
    seen = b""
    deadline = time.monotonic() + 60
    answered = False
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        if not answered and b"[y/N]" in seen:
            os.write(leader, answer)
            answered = True
        if child.poll() is not None and not ready:
            break
    code = child.wait(timeout=60)
    os.close(leader)
    return code, seen.decode(errors="replace")


@pytest.mark.parametrize(("answer", "code", "kept"), [(b"n\n", 1, True), (b"y\n", 0, False)], ids=["no", "yes"])
def test_reset_asks_on_a_terminal(workspace: Path, tmp_path: Path, answer: bytes, code: int, kept: bool) -> None:
    record_families(workspace_store(workspace), workspace, ["f1"], [SEARCH])
    env = clean_environment(tmp_path, NO_COLOR="1")
    done, shown = _on_a_terminal(["stats", "reset", "--workspace", str(workspace)], answer, env)
    assert "Delete the workspace usage statistics in" in shown and "Traceback" not in shown
    assert done == code
    assert workspace_store(workspace).path.exists() is kept


def test_reset_keeps_a_damaged_file_aside(workspace: Path, run_cli: CliRunner) -> None:
    path = workspace_store(workspace).path
    path.parent.mkdir()
    path.write_bytes(b"garbage")
    assert run_cli("stats", "reset", "--workspace", str(workspace), "--yes").code == 0
    assert not path.exists()
    kept = [p for p in path.parent.iterdir() if p.name != "config.toml" and p.read_bytes() == b"garbage"]
    assert kept, "the damaged file was not kept aside"
    assert run_cli("stats", "--workspace", str(workspace)).code == 0


def test_reset_with_nothing_recorded_deletes_nothing_and_needs_no_answer(workspace: Path, run_cli: CliRunner) -> None:
    done = run_cli("stats", "reset", "--workspace", str(workspace))
    assert done.code == 0 and "nothing to delete" in done.out
    assert not (workspace / ".ptc-plus").exists()


def test_stats_shows_the_result_shapes_learned_per_contract_revision(workspace: Path, run_cli: CliRunner) -> None:
    configure(workspace)
    shape = derive_shape('{"standard_rate": 20.0, "country": "FR"}')
    workspace_store(workspace).record(
        FamilySample(
            family_id="f1",
            workspace=str(workspace),
            plan_config_revision="c",
            evidence=(
                Evidence(
                    identity="mcp:tax/rates",
                    revision="sha256:1111111111111111",
                    disclosure="full",
                    used=True,
                    shape=shape,
                    results=3,
                ),
            ),
        )
    )
    done = run_cli("stats", "--workspace", str(workspace), "--json")
    assert done.code == 0, done.err
    (learned,) = done.json()["learned"]
    assert learned["identity"] == "mcp:tax/rates" and learned["revision"] == "sha256:1111111111111111"
    assert (learned["scope"], learned["results"], learned["shape"]) == ("workspace", 3, shape)
    text = run_cli("stats", "--workspace", str(workspace))
    assert text.code == 0, text.err
    assert (
        f"learned result shape of mcp:tax/rates (workspace, 3 results since {learned['since']}): "
        "json({country: str, standard_rate: float})"
    ) in text.out
