"""Suite-wide checks.

The sandbox tests skip where bubblewrap is absent (a developer laptop without
it). ``scripts/test`` installs bubblewrap when it can and then sets
``TESTS_REQUIRE_BWRAP=1``, so on CI a missing bubblewrap fails the run instead
of quietly skipping every confinement and escape test.
"""

from __future__ import annotations

import os
import shutil

import pytest


def pytest_sessionstart(session: pytest.Session) -> None:
    if os.environ.get("TESTS_REQUIRE_BWRAP") == "1" and shutil.which("bwrap") is None:
        raise pytest.UsageError("TESTS_REQUIRE_BWRAP=1 but bwrap is not on PATH: the sandbox tests would all skip")
