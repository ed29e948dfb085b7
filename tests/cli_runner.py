"""The in-process ``ptc-plus`` runner behind the ``run_cli`` fixture (tests/conftest.py).

Tests take the fixture and annotate it with :data:`CliRunner`::

    def test_plan(run_cli: CliRunner) -> None:
        done = run_cli("capabilities", "plan", "--json")
        assert done.code == 0 and done.json()["version"] == 1
"""

from __future__ import annotations

from typing import Any, Protocol

import attrs
import orjson


@attrs.frozen
class CliRun:
    """What one in-process ``ptc-plus`` invocation returned and printed."""

    code: int
    out: str
    err: str

    def json(self) -> Any:
        """Standard output read as one JSON document (for ``--json`` commands)."""
        return orjson.loads(self.out)


class CliRunner(Protocol):
    def __call__(self, *argv: str, stdin: str = "") -> CliRun: ...
