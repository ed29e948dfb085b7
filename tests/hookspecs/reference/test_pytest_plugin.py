"""The reference host's pytest fixtures are opt-in, and the package docstring's worked example runs as written."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from importlib.metadata import distribution
from pathlib import Path

import hookspecs.reference

ROOT = Path(__file__).resolve().parents[3]


def _examples() -> list[str]:
    """The literal blocks (``::`` then an indented block) of the package docstring, dedented."""
    doc = hookspecs.reference.__doc__ or ""
    blocks: list[str] = []
    for chunk in doc.split("::\n\n")[1:]:
        lines = []
        for line in chunk.splitlines():
            if line and not line.startswith("    "):
                break
            lines.append(line)
        blocks.append(textwrap.dedent("\n".join(lines)).strip() + "\n")
    return blocks


def _pytest(project: Path) -> subprocess.CompletedProcess[str]:
    # A fresh interpreter in a project of its own: what a plugin author's `pytest` sees with ptc-plus installed.
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "asyncio_mode=auto", str(project)],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_distribution_registers_no_pytest_plugin() -> None:
    assert [ep for ep in distribution("ptc-plus").entry_points if ep.group == "pytest11"] == []
    assert "pytest11" not in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def test_the_worked_example_passes_with_the_opt_in_line_and_the_fixtures_stay_out_without_it(tmp_path: Path) -> None:
    plugin, opt_in, test = _examples()
    assert opt_in == 'pytest_plugins = ["hookspecs.reference.pytest_plugin"]\n'
    (tmp_path / "hello_plugin.py").write_text(plugin, encoding="utf-8")
    (tmp_path / "test_hello.py").write_text(test, encoding="utf-8")

    without = _pytest(tmp_path)
    assert without.returncode != 0
    assert "fixture 'make_reference_host' not found" in without.stdout

    (tmp_path / "conftest.py").write_text(opt_in, encoding="utf-8")
    with_line = _pytest(tmp_path)
    assert with_line.returncode == 0, with_line.stdout + with_line.stderr
    assert "1 passed" in with_line.stdout
