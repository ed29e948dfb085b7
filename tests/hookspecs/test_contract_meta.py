"""Meta-tests: every hookspec documents its whole contract and has a contract test."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pluggy
import pytest

from hookspecs import specs
from hookspecs.markers import PROJECT_NAME

HOOK_TESTS = Path(__file__).with_name("test_hooks.py")


def _hookspecs() -> list[str]:
    pm = pluggy.PluginManager(PROJECT_NAME)
    pm.add_hookspecs(specs)
    return sorted(name for name in dir(pm.hook) if name.startswith("agent_host_"))


def test_there_are_hooks_for_every_seam_of_the_spec() -> None:
    names = _hookspecs()
    for seam in ("prompt_sections", "context_messages", "tool_execute", "tool_result", "session_start", "command"):
        assert f"agent_host_{seam}" in names


@pytest.mark.parametrize("name", _hookspecs())
def test_hookspec_docstring_is_the_whole_contract(name: str) -> None:
    function = getattr(specs, name)
    doc = inspect.getdoc(function) or ""
    for param in inspect.signature(function).parameters:
        assert f":param {param}:" in doc, f"{name} does not document {param}"
    for part in (":returns:", "**Result**", "**Called**", "**Raises**"):
        assert part in doc, f"{name} lacks {part}"


@pytest.mark.parametrize("name", _hookspecs())
def test_hookspec_has_a_contract_test(name: str) -> None:
    tree = ast.parse(HOOK_TESTS.read_text(encoding="utf-8"))
    tests = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    assert f"test_hook_{name}" in tests


@pytest.mark.parametrize("name", _hookspecs())
def test_firstresult_hooks_return_optional(name: str) -> None:
    function = getattr(specs, name)
    opts = getattr(function, f"{PROJECT_NAME}_spec")
    annotation = inspect.signature(function).return_annotation
    if opts.get("firstresult"):
        assert "None" in str(annotation), f"{name} is firstresult and must return T | None"
