"""The whole demo: it says the model is scripted, never contradicts its tools, and cleans up after itself."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ptc_plus.demo import run_demo
from ptc_plus.demo.workspace import DEMO_CONFIG
from ptc_plus.i18n import message


@pytest.fixture
def demo_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """English messages, no user config, temporary directories under the returned path."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("PTC_LOCALE", "en")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr("tempfile.tempdir", str(temp))
    return temp


def _assistant(lines: list[str]) -> tuple[str, str]:
    """The answers of the two turns: the first question's, then the follow-up's after the refresh."""
    first, second = [line for line in lines if line.startswith("Assistant (")]
    return first, second


def _after(lines: list[str], start: str) -> list[str]:
    """The lines from the first one opening with ``start`` on."""
    return lines[next(i for i, line in enumerate(lines) if line.startswith(start)) :]


def _called(lines: list[str], arrow: str) -> list[str]:
    """The tools of the second turn's calls printed with ``arrow`` (its indent says nested or top-level)."""
    found = (re.match(re.escape(arrow) + r"(\w+)\(", line) for line in lines)
    return [match.group(1) for match in found if match]


@pytest.mark.asyncio
@pytest.mark.parametrize("mode", ["on", "off"])
async def test_the_answer_is_what_the_tools_found(
    demo_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    monkeypatch.setenv("PTC_MODE", mode)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    lines: list[str] = []
    assert await run_demo(workspace, out=lines.append) == 0
    first, second = _assistant(lines)
    assert "2 TODO lines" in first and "26.2 miles, which is 42.16 km" in first
    assert second.endswith("docs/routes.md gives the river loop as 26.2 miles: 42164.81 m, or 138336 ft.")
    # The user changes the docs of the previous demo's workspace: the scripted model must follow the tools.
    routes = workspace / "docs" / "routes.md"
    routes.write_text("# Routes\n\nThe river loop is 13.1 miles.\n", encoding="utf-8")
    lines.clear()
    assert await run_demo(workspace, out=lines.append) == 0
    first, second = _assistant(lines)
    assert "found 1 TODO line: README.md:5 TODO: document the elevation model." in first
    assert "docs/routes.md gives the river loop as 13.1 miles, which is 21.08 km" in first
    assert "note 2" in first
    assert second.endswith("docs/routes.md gives the river loop as 13.1 miles: 21082.41 m, or 69168 ft.")
    if mode == "off":
        (environment,) = [line for line in lines if line.startswith("Code mode is off")]
        assert "gate:" not in environment and message("gate.reason.mode-off", "en") in environment


@pytest.mark.asyncio
@pytest.mark.parametrize("mode", ["on", "off"])
async def test_the_demo_ends_with_a_config_change_a_refresh_and_a_cell_on_the_new_plan(
    demo_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    monkeypatch.setenv("PTC_MODE", mode)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    lines: list[str] = []
    assert await run_demo(workspace, out=lines.append) == 0
    tail = _after(lines, message("demo.change.intro", "en"))
    assert tail[1:3] == [
        "  $ ptc-plus capabilities set host:convert_units full  (changed; was inherited)",
        "  $ ptc-plus capabilities set host:write_file off  (changed; was inherited)",
    ]
    assert tail[3] == "/capabilities refresh [applied]"
    assert tail[4].startswith("  Refresh #1 applied: turned off: host:write_file; disclosure changed: ")
    assert "host:convert_units (on-demand → full)" in tail[4]
    assert "  host:write_file [off]: explicit choice in the config" in tail
    turn = _after(tail, "User: Now give me the river loop")
    if mode == "on":
        # The notice the model got at its next step, by its head; then a cell calling the converter directly.
        assert (
            turn[1] == "The host adds a message for the model's next step [ptc-plus:catalog]: "
            '"# Capability refresh #1: this catalog replaces the previous one."'
        )
        assert turn[2] == "    # No longer callable (calls are refused): write_file"
        assert turn[3].startswith("    # Disclosure changed: convert_units (on-demand → full)")
        assert turn[4].startswith("    … and ") and turn[4].endswith(" more lines: the catalog in force from now on.")
        assert _called(turn, "    → ") == ["convert_units", "convert_units"]  # no capabilities.search first
    else:
        # Natively there is no catalog: no notice, and the demo says so rather than echo the receipt.
        assert not any(line.startswith("The host adds a message") for line in turn)
        assert any("Code mode is off in this session, so the model is not told" in line for line in tail)
        (native,) = [line for line in tail if line.startswith("The model is still offered the host's own tools")]
        assert "write_file" in native
        assert _called(turn, "  → ") == ["convert_units", "convert_units"]
    # A kept workspace gets its config back: the next run starts from the seeded plan again.
    restored = (workspace / ".ptc-plus" / "config.toml").read_text(encoding="utf-8")
    assert restored.rstrip("\n") == DEMO_CONFIG.rstrip("\n")
    assert any(line.startswith("Put this workspace's config back for the next run") for line in lines)


@pytest.mark.asyncio
async def test_it_says_the_model_is_scripted_and_removes_its_temporary_workspace(demo_env: Path) -> None:
    lines: list[str] = []
    assert await run_demo(out=lines.append) == 0
    assert lines[0] == message("demo.scripted", "en")
    (shown,) = [line for line in lines if line.startswith("Demo workspace (temporary")]
    assert shown.endswith(str(demo_env.resolve() / shown.rsplit("/", 1)[1]))
    assert list(demo_env.iterdir()) == []
    assert lines[-1].startswith("Removed the temporary workspace")


@pytest.mark.asyncio
async def test_an_error_midway_still_removes_the_temporary_workspace(demo_env: Path) -> None:
    lines: list[str] = []

    def out(line: str) -> None:
        lines.append(line)
        if line.startswith("User:"):
            raise RuntimeError("the terminal went away")

    with pytest.raises(RuntimeError):
        await run_demo(out=out)
    assert any(line.startswith("Demo workspace (temporary") for line in lines)
    assert list(demo_env.iterdir()) == []


def test_ctrl_c_removes_the_temporary_workspace(tmp_path: Path) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    # The printer interrupts the run itself, as Ctrl-C would, once the session is under way.
    program = (
        "import asyncio, os, signal, sys\n"
        "from ptc_plus.demo import run_demo\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "def out(line):\n"
        "    print(line, flush=True)\n"
        "    if line.startswith('User:'):\n"
        "        os.kill(os.getpid(), signal.SIGINT)\n"
        "try:\n"
        "    asyncio.run(run_demo(out=out))\n"
        "except KeyboardInterrupt:\n"
        "    sys.exit(130)\n"
    )
    env = {**os.environ, "TMPDIR": str(temp), "PTC_LOCALE": "en", "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 130, done.stderr
    assert "Demo workspace (temporary" in done.stdout and "User:" in done.stdout
    assert list(temp.iterdir()) == []


@pytest.mark.asyncio
async def test_a_foreign_workspace_is_refused_before_anything_is_printed(demo_env: Path, tmp_path: Path) -> None:
    from ptc_plus.demo.errors import DemoWorkspaceInUse

    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "main.py").write_text("print('mine')\n", encoding="utf-8")
    lines: list[str] = []
    with pytest.raises(DemoWorkspaceInUse):
        await run_demo(tmp_path / "project", out=lines.append)
    assert lines == [] and [p.name for p in (tmp_path / "project").iterdir()] == ["main.py"]


@pytest.mark.parametrize(
    "token", ["gate:mode-off", "gate:a-reason-from-the-future", "sandbox-unavailable", "presentation", "??"]
)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_why_code_mode_is_off_is_said_in_words(token: str, lang: str) -> None:
    from ptc_plus.demo.run import native_reason_words

    words = native_reason_words(token, lang)
    assert words != token and "gate:" not in words and "sandbox-unavailable" not in words
    assert words != native_reason_words(token, "en" if lang == "zh" else "zh")


@pytest.mark.asyncio
async def test_with_the_plugin_blocked_the_demo_says_there_is_no_plan_to_refresh(
    demo_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_HOST_DISABLE_PLUGINS", "ptc_plus")
    lines: list[str] = []
    assert await run_demo(out=lines.append) == 0
    tail = _after(lines, "/capabilities refresh [")
    assert tail[0] == "/capabilities refresh [failed]"
    assert tail[2].startswith("PTC Plus keeps no plan for this session, so there is nothing to refresh")
    assert not any(line.startswith(("Code mode is off", "Context message")) for line in tail)
    assert _assistant(lines)[1].endswith("26.2 miles: 42164.81 m, or 138336 ft.")
