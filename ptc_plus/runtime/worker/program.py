"""Turning the model's code into an async function, and its traceback into the program's own frames.

``code`` is an async *body*: top-level ``await`` and ``return`` are allowed;
without a ``return`` the value of a trailing expression statement is the
program's value. The body becomes ``async def __ptc_program__()`` with line
numbers kept, so tracebacks point at the model's own lines.
"""

from __future__ import annotations

import ast
import linecache
import traceback
from types import CodeType, TracebackType
from typing import Any

FILENAME = "<program>"
ENTRY = "__ptc_program__"


def compile_program(source: str) -> CodeType:
    """Compile ``source`` into a module defining :data:`ENTRY`; raises ``SyntaxError``."""
    linecache.cache[FILENAME] = (len(source), None, source.splitlines(keepends=True), FILENAME)
    tree = ast.parse(source, FILENAME, "exec")
    body: list[ast.stmt] = list(tree.body) or [ast.Pass()]
    last = body[-1]
    if isinstance(last, ast.Expr):
        body[-1] = ast.copy_location(ast.Return(value=last.value), last)
    function = ast.AsyncFunctionDef(
        name=ENTRY,
        args=ast.arguments(
            posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]
        ),
        body=body,
        decorator_list=[],
        returns=None,
        type_comment=None,
        lineno=1,
        col_offset=0,
    )
    module = ast.Module(body=[function], type_ignores=[])
    ast.fix_missing_locations(module)
    return compile(module, FILENAME, "exec", dont_inherit=True)


def program_traceback(error: BaseException) -> str:
    """The traceback of ``error`` with only the program's frames (host and runtime frames dropped)."""
    lines: list[str] = []
    frames = [frame for frame in traceback.extract_tb(_tb(error)) if frame.filename == FILENAME]
    if frames:
        lines.append("Traceback (most recent call last):\n")
        for frame in frames:
            where = "<module>" if frame.name == ENTRY else frame.name
            lines.append(f'  File "{FILENAME}", line {frame.lineno}, in {where}\n')
            if frame.line:
                lines.append(f"    {frame.line.strip()}\n")
    lines.extend(traceback.format_exception_only(type(error), error))
    return "".join(lines)


def _tb(error: BaseException) -> TracebackType | None:
    return error.__traceback__


def error_summary(error: BaseException) -> dict[str, Any]:
    """``type``, ``message`` and the trimmed ``traceback`` of an exception the program raised."""
    return {
        "type": type(error).__qualname__,
        "message": str(error),
        "traceback": program_traceback(error),
    }
