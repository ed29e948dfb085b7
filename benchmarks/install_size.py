"""Install size of today's tree: what `pip install` of PTC Plus puts in a fresh venv's site-packages.

The README quotes this file's numbers (``tests/test_readme.py`` holds it to them). It reuses the footprint
benchmark's method (ADR 0060, ``benchmarks/footprint.py``): a copy of the working tree, its wheel built with
hatchling, installed with pip into a new venv so the dependencies resolve from the package index as a
user's install would; sizes are file bytes on disk, per distribution from its RECORD.

Run: ``.venv/bin/python benchmarks/install_size.py`` → benchmarks/results/install_size.json
"""

from __future__ import annotations

import platform
import sys
import tempfile
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from footprint import measure  # a sibling script, not a package

RESULTS = Path(__file__).resolve().parent / "results" / "install_size.json"
TODAY = "b_tiktoken_shipped_vocab"
"""The footprint option that is today's tree unchanged."""


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="ptc-install-size-") as tmp:
        found = measure(TODAY, Path(tmp))
    report = {
        "version": 1,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "method": "the working tree's wheel installed with pip into a fresh venv; file bytes on disk",
        **found,
    }
    RESULTS.write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n")
    print(orjson.dumps({k: report[k] for k in ("site_packages_mb", "site_packages_less_pip_setuptools_mb")}).decode())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
