"""pytest fixtures for plugin authors: a reference host in a temporary workspace.

Opt-in, as tox's fixtures are: installing ``ptc-plus`` loads nothing into a
project's pytest run. A test suite that wants the fixtures names this module
in its top-level ``conftest.py``::

    pytest_plugins = ["hookspecs.reference.pytest_plugin"]

    async def test_my_plugin(make_reference_host):
        async with make_reference_host(plugins=[my_plugin]) as host:
            session = await host.start_session(model=ScriptedModel([...]))

The worked example is in :mod:`hookspecs.reference`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hookspecs.reference.host import ReferenceHost


@pytest.fixture
def reference_workspace(tmp_path: Path) -> Path:
    """An empty workspace directory for one test."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    return workspace


@pytest.fixture
def make_reference_host(reference_workspace: Path) -> Callable[..., ReferenceHost]:
    """Build a :class:`ReferenceHost` in :func:`reference_workspace`.

    Entry points are not loaded unless ``load_entry_points=True`` is passed,
    so a test sees exactly the plugins it hands in.
    """

    def build(**kwargs: Any) -> ReferenceHost:
        kwargs.setdefault("workspace", reference_workspace)
        kwargs.setdefault("load_entry_points", False)
        return ReferenceHost(**kwargs)

    return build
