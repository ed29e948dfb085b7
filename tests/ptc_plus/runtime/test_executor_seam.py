"""Nothing outside the runtime names an executor's implementation (ADR 0127).

The session and ``/capabilities`` ask the runtime's face (``executor_availability``) whether the configured
executor can confine programs here; the config reads the executor's name through ``ExecutorName``. A module
outside ``ptc_plus/runtime/`` that names bubblewrap, ``bwrap``, gVisor or ``runsc`` would couple it to one
implementation again.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
NAMES = re.compile(r"bubblewrap|bwrap|gvisor|runsc", re.IGNORECASE)


def offenders(root: Path) -> list[str]:
    found = []
    for package in ("ptc_plus", "hookspecs"):
        for path in sorted((root / package).rglob("*.py")):
            relative = path.relative_to(root)
            if relative.parts[:2] == ("ptc_plus", "runtime"):
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if NAMES.search(line):
                    found.append(f"{relative}:{number}: {line.strip()}")
    return found


def test_no_module_outside_the_runtime_names_an_executor() -> None:
    assert offenders(ROOT) == []


def test_the_check_finds_a_module_that_does(tmp_path: Path) -> None:
    (tmp_path / "ptc_plus" / "session").mkdir(parents=True)
    (tmp_path / "ptc_plus" / "runtime").mkdir(parents=True)
    (tmp_path / "hookspecs").mkdir()
    (tmp_path / "ptc_plus" / "session" / "readiness.py").write_text("probe(limits.bwrap_path)\n")
    (tmp_path / "ptc_plus" / "runtime" / "sandbox.py").write_text("BWRAP = 'bwrap'\n")
    assert offenders(tmp_path) == ["ptc_plus/session/readiness.py:1: probe(limits.bwrap_path)"]
