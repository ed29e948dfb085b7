"""The reference host's spill store: large text kept on disk, read back by handle."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path


class FileSpillStore:
    """Content-addressed text files under one directory; writes are atomic and idempotent."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def put(self, text: str) -> str:
        data = text.encode("utf-8")
        handle = "spill-" + hashlib.sha256(data).hexdigest()[:32]
        target = self.root / f"{handle}.txt"
        if not target.exists():
            self.root.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".spill-")
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, target)
        return handle

    def read(self, handle: str, offset: int = 0, limit: int | None = None) -> str:
        if not handle.startswith("spill-") or not handle[6:].isalnum():
            raise KeyError(handle)
        try:
            text = (self.root / f"{handle}.txt").read_text(encoding="utf-8")
        except FileNotFoundError as exc:
            raise KeyError(handle) from exc
        return text[offset:] if limit is None else text[offset : offset + limit]
