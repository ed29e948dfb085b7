"""Add or update one message in both locales of its owner's catalog, safely under concurrent edits.

Usage: python scripts/locale_add.py KEY "English text" "中文文本"

The key names its owner: ``host.*``, ``tool-error.*``, ``workspace-path.*`` and
``error.HOST-xxxx`` belong to the host contract (``locale/hookspecs/``), every
other key to the plugin (``locale/ptc_plus/``).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import orjson
from filelock import FileLock

from hookspecs.serialization import canonical_bytes

ROOT = Path(__file__).resolve().parent.parent / "locale"
HOST_KEYS = ("host.", "tool-error.", "workspace-path.", "error.HOST-")


def owner(key: str) -> str:
    """The catalog directory under ``locale/`` that holds ``key``."""
    return "hookspecs" if key.startswith(HOST_KEYS) else "ptc_plus"


def _write(path: Path, data: dict[str, str]) -> None:
    blob = canonical_bytes(data, indent=True) + b"\n"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "wb") as fh:
        fh.write(blob)
        # mkstemp makes 0600; the catalog ships in the wheel and must stay readable by every user.
        os.fchmod(fh.fileno(), 0o644)
    os.replace(tmp, path)


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    key, en, zh = argv
    with FileLock(str(ROOT / ".lock")):
        for lang, text in (("en", en), ("zh", zh)):
            path = ROOT / owner(key) / f"{lang}.json"
            data = orjson.loads(path.read_bytes()) if path.exists() else {}
            data[key] = text
            _write(path, data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
