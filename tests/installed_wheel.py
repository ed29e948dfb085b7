"""The package as a user installs it: the wheel built from this checkout, unpacked, and a program run against it.

Resources a module finds next to itself (catalogs, the tokenizer's vocabulary)
must be found inside the installed package, not in the source tree; a probe
run here imports only the unpacked wheel's packages from the checkout.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import attrs
import orjson

ROOT = Path(__file__).resolve().parent.parent


@attrs.frozen
class UnpackedWheel:
    site: Path
    """Where the wheel was unpacked (what an installer would put in site-packages)."""
    names: frozenset[str]
    """Every file the wheel holds, by its path inside the wheel."""

    def probe(self, program: str) -> Any:
        """Run ``program`` in a fresh interpreter that imports the unpacked wheel first; its stdout read as JSON.

        The source tree is on no path (the working directory is the wheel's parent, and ``-c`` adds nothing
        else); the dependencies come from this interpreter's site-packages.
        """
        done = subprocess.run(
            [sys.executable, "-c", program],
            cwd=self.site.parent,
            env={"PYTHONPATH": str(self.site), "PATH": "/usr/bin:/bin"},
            capture_output=True,
            check=True,
            timeout=120,
        )
        return orjson.loads(done.stdout)


def unpack_wheel(directory: Path) -> UnpackedWheel:
    """Build the standard wheel from this checkout into ``directory/dist`` and unpack it into ``directory/site``."""
    from hatchling.builders.wheel import WheelBuilder

    (wheel,) = WheelBuilder(str(ROOT)).build(directory=str(directory / "dist"), versions=["standard"])
    site = directory / "site"
    with zipfile.ZipFile(wheel) as archive:
        names = frozenset(archive.namelist())
        archive.extractall(site)
    return UnpackedWheel(site=site, names=names)
