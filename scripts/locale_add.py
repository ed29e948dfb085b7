"""Add or update one message in both locale catalogs, safely under concurrent edits.

Usage: python scripts/locale_add.py KEY "English text" "中文文本"
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import orjson
from filelock import FileLock

ROOT = Path(__file__).resolve().parent.parent / "locale"


def _write(path: Path, data: dict[str, str]) -> None:
    blob = orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "wb") as fh:
        fh.write(blob)
    os.replace(tmp, path)


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    key, en, zh = argv
    with FileLock(str(ROOT / ".lock")):
        for lang, text in (("en", en), ("zh", zh)):
            path = ROOT / f"{lang}.json"
            data = orjson.loads(path.read_bytes()) if path.exists() else {}
            data[key] = text
            _write(path, data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
