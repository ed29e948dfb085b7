"""The host's check of a workflow script before its run starts (ADR 0116).

:func:`check_script` parses the script as an async body and walks it once,
refusing what :mod:`.rules` refuses with the first offending line, and
collects the providers named literally in ``agent(..., provider="...")`` so
the start can refuse one the host does not have before any child runs.
"""

from __future__ import annotations

import ast

import attrs

from ptc_plus.workflow.errors import ScriptRefused, ScriptSyntax
from ptc_plus.workflow.rules import DENIED_ATTRIBUTES, DENIED_NAMES

MAX_SCRIPT_CHARS = 200_000
"""A longer script is refused: orchestration is short, children do the work."""


@attrs.frozen(kw_only=True)
class CheckedScript:
    source: str
    providers: frozenset[str]
    """Providers named by a literal ``provider=`` keyword of an ``agent(...)`` call."""


def check_script(source: str) -> CheckedScript:
    """The script, checked; raises :class:`ScriptSyntax` or :class:`ScriptRefused` (nothing has started)."""
    if len(source) > MAX_SCRIPT_CHARS:
        raise ScriptRefused(line=1, what=f"{len(source)} characters (at most {MAX_SCRIPT_CHARS})")
    try:
        tree = ast.parse(source, "<workflow>", "exec")
    except SyntaxError as error:
        # Top-level await and return are allowed: the guest wraps the body in an async function.
        try:
            tree = ast.parse(_wrapped(source), "<workflow>", "exec")
        except SyntaxError as wrapped_error:
            line = (wrapped_error.lineno or 2) - 1 if wrapped_error.lineno else error.lineno or 0
            raise ScriptSyntax(line=line, detail=wrapped_error.msg) from None
    providers: set[str] = set()
    for node in ast.walk(tree):
        refused = refusal(node)
        if refused is not None:
            raise ScriptRefused(line=getattr(node, "lineno", 0), what=refused)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "agent":
            for keyword in node.keywords:
                value = keyword.value
                if keyword.arg == "provider" and isinstance(value, ast.Constant) and isinstance(value.value, str):
                    providers.add(value.value)
    return CheckedScript(source=source, providers=frozenset(providers))


def refusal(node: ast.AST) -> str | None:
    """What is wrong with ``node`` under :mod:`.rules`, or ``None``."""
    if isinstance(node, ast.Import | ast.ImportFrom):
        return "import"
    if isinstance(node, ast.ClassDef):
        return "class"
    if isinstance(node, ast.Name) and _denied_name(node.id):
        return f"name {node.id!r}"
    if isinstance(node, ast.Attribute) and (node.attr.startswith("_") or node.attr in DENIED_ATTRIBUTES):
        return f"attribute {node.attr!r}"
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        for arg in _arguments(node.args):
            if _denied_name(arg):
                return f"name {arg!r}"
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _denied_name(node.name):
        return f"name {node.name!r}"
    if isinstance(node, ast.ExceptHandler) and node.name is not None and _denied_name(node.name):
        return f"name {node.name!r}"
    if isinstance(node, ast.keyword) and node.arg is not None and node.arg.startswith("_"):
        return f"keyword {node.arg!r}"
    if isinstance(node, ast.Global | ast.Nonlocal):
        for name in node.names:
            if _denied_name(name):
                return f"name {name!r}"
    if isinstance(node, ast.MatchAs | ast.MatchStar) and node.name is not None and _denied_name(node.name):
        return f"name {node.name!r}"
    if isinstance(node, ast.MatchClass):
        return "class pattern"
    return None


def _denied_name(name: str) -> bool:
    return name.startswith("_") or name in DENIED_NAMES


def _arguments(args: ast.arguments) -> list[str]:
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    every.extend(a for a in (args.vararg, args.kwarg) if a is not None)
    return [a.arg for a in every]


def _wrapped(source: str) -> str:
    body = "\n".join("    " + line for line in source.splitlines()) or "    pass"
    return f"async def workflow():\n{body}\n"
