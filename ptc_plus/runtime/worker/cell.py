"""Compiling a kernel-mode cell, and the names a cell binds and references.

A cell is a program (see :mod:`.program`) whose top-level names outlive it:
every name bound at the cell's top level is declared ``global`` in the
wrapper, so it lands in the kernel's one namespace dict and the next cell
sees it. "Top level" is the wrapper's own scope: the bodies of ``if``,
``for``, ``try``, ``with`` and ``match`` count, the bodies of nested
functions, classes, lambdas and comprehensions do not (except a walrus in a
comprehension, which binds in the enclosing scope, as in Python).

The host imports :func:`bound_names` and :func:`referenced_names` to record
what a cell defines and uses; this module imports only the standard library.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from types import CodeType

from . import program

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def compile_cell(source: str) -> CodeType:
    """Compile ``source`` into a module defining :data:`.program.ENTRY` whose top-level names are
    globals of the namespace it is executed in; raises ``SyntaxError``.

    ``return`` and the trailing-expression value work as in a one-shot program, and tracebacks
    point at the cell's own lines (:func:`.program.error_summary` reads them).
    """
    tree = program.parse_program(source)
    names = sorted(_bound(tree.body))
    body = [_CellScope(frozenset(names)).visit(statement) for statement in tree.body]
    if names:
        # A ``global`` statement must precede every use of its names: it goes first, on line 1.
        body.insert(0, ast.Global(names=names, lineno=1, col_offset=0, end_lineno=1, end_col_offset=0))
    code = program.wrap(body)
    program.remember_lines(code)
    return code


def bound_names(source: str) -> frozenset[str]:
    """The names bound at the top level of the cell ``source``; raises ``SyntaxError``."""
    return frozenset(_bound(ast.parse(source, program.FILENAME, "exec").body))


def referenced_names(source: str) -> frozenset[str]:
    """Every name the cell ``source`` mentions anywhere, read or written (``ast.Name`` ids, so the
    base of every attribute chain), with the names it binds by ``def``, ``class``, ``import``,
    ``except ... as``, ``global``/``nonlocal`` and ``match`` captures; raises ``SyntaxError``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source, program.FILENAME, "exec")):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update(_imported(node))
        elif isinstance(node, ast.ExceptHandler) and node.name:
            found.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            found.update(node.names)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            found.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            found.add(node.rest)
    return frozenset(found)


def _imported(node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    for alias in node.names:
        if alias.name == "*":
            continue
        yield alias.asname or alias.name.split(".", 1)[0]


def _bound(statements: list[ast.stmt]) -> set[str]:
    found: set[str] = set()
    for statement in statements:
        _collect(statement, found)
    return found


def _collect(node: ast.AST, found: set[str]) -> None:
    """Add the names ``node`` binds in the scope it belongs to (not in scopes nested inside it)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        found.add(node.name)
        # Decorators, defaults, annotations and bases are evaluated here; bodies are their own scope.
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.stmt):
                _collect(child, found)
        return
    if isinstance(node, ast.Lambda):
        _collect(node.args, found)
        return
    if isinstance(node, _COMPREHENSIONS):
        _walrus_targets(node, found)
        return
    if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
        found.add(node.id)
    elif isinstance(node, ast.AnnAssign) and node.value is None:
        # A bare annotation binds nothing at module level; its target is not visited as a store.
        _collect(node.annotation, found)
        return
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        found.update(_imported(node))
    elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
        found.add(node.name)
    elif isinstance(node, ast.MatchMapping) and node.rest:
        found.add(node.rest)
    for child in ast.iter_child_nodes(node):
        _collect(child, found)


def _walrus_targets(node: ast.AST, found: set[str]) -> None:
    """``(name := ...)`` inside a comprehension binds in the enclosing scope (PEP 572)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, _SCOPES):
            if isinstance(child, ast.Lambda):
                continue
            _collect(child, found)  # a def/class cannot appear in an expression; kept for completeness
            continue
        if isinstance(child, ast.NamedExpr) and isinstance(child.target, ast.Name):
            found.add(child.target.id)
        _walrus_targets(child, found)


class _CellScope(ast.NodeTransformer):
    """Rewrites what Python refuses once the cell's names are ``global`` in the wrapper.

    In the cell's own scope ``x: T = v`` becomes ``x = v`` and a bare ``x: T`` disappears (an
    annotated name cannot be global; a function never evaluates local annotations anyway). In a
    function whose nearest enclosing function is the wrapper, ``nonlocal x`` for a cell name
    becomes ``global x`` (the name it meant now lives in the namespace).
    """

    def __init__(self, names: frozenset[str]) -> None:
        self._names = names
        self._depth = 0
        """Functions entered below the wrapper (class bodies do not count: they are not enclosing scopes)."""
        self._classes = 0
        """Class bodies entered: their annotations are the class's own, kept as written."""

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST | None:
        if self._depth or self._classes or not isinstance(node.target, ast.Name):
            return self.generic_visit(node)
        if node.value is None:
            return ast.copy_location(ast.Pass(), node)
        return ast.copy_location(ast.Assign(targets=[node.target], value=self.visit(node.value)), node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return self._function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        return self._function(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        self._classes += 1
        try:
            return self.generic_visit(node)
        finally:
            self._classes -= 1

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        return node  # a lambda holds no statements

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
        if self._depth:
            return node  # deeper functions resolve ``nonlocal`` through their own enclosing function
        self._depth += 1
        try:
            return self.generic_visit(node)
        finally:
            self._depth -= 1

    def visit_Nonlocal(self, node: ast.Nonlocal) -> ast.AST | list[ast.stmt]:
        if self._depth != 1:
            return node
        moved = [name for name in node.names if name in self._names]
        if not moved:
            return node
        kept = [name for name in node.names if name not in self._names]
        statements: list[ast.stmt] = [ast.copy_location(ast.Global(names=moved), node)]
        if kept:
            statements.append(ast.copy_location(ast.Nonlocal(names=kept), node))
        return statements
