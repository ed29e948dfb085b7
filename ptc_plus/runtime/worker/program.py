"""Turning the model's code into an async function, and its failure into a report about the program.

``code`` is an async *body*: top-level ``await`` and ``return`` are allowed;
without a ``return`` the value of a trailing expression statement is the
program's value. The body becomes ``async def __ptc_program__()`` with line
numbers kept, so tracebacks point at the model's own lines.

:func:`error_summary` reports an exception the program raised without
trusting it: the traceback is read from the frames themselves (never through
the exception's attributes, never through :mod:`linecache`, which the program
can fill and which would open any file a frame claims to come from), only
the program's own frames are shown, and the one program-defined call made on
purpose — ``str(error)`` — is guarded (see :mod:`.foreign`). Every part is
bounded: lines, frames, chained and grouped exceptions, and the total text.
"""

from __future__ import annotations

import ast
import linecache
from types import CodeType, TracebackType
from typing import Any

from . import foreign, messages

FILENAME = "<program>"
ENTRY = "__ptc_program__"

STR_FAILED = "<exception str() failed>"
"""The message of an exception whose ``str()`` fails (the text CPython's own traceback uses)."""

LINE_CHARS = 300
"""Source lines and notes in a traceback are cut to this many characters."""
TRACE_MESSAGE_CHARS = 2000
"""An exception's message inside the traceback is cut to this (the whole message is reported beside it)."""
MAX_FRAMES = 100
"""Frames shown per exception: the outermost and the innermost, with a count of those skipped between."""
MAX_EXCEPTIONS = 16
"""Exceptions shown per failure, chained causes and group members together."""
MAX_MEMBERS = 5
"""Members shown per exception group."""
_REPEATS = 3
_MAX_WALK = 100_000

_CAUSE = BaseException.__dict__["__cause__"]
_CONTEXT = BaseException.__dict__["__context__"]
_SUPPRESS = BaseException.__dict__["__suppress_context__"]
_TRACEBACK = BaseException.__dict__["__traceback__"]
_INSTANCE_DICT = BaseException.__dict__["__dict__"]
_MEMBERS = BaseExceptionGroup.__dict__["exceptions"]
_SYNTAX_FIELDS = {
    name: SyntaxError.__dict__[name] for name in ("filename", "lineno", "offset", "end_offset", "text", "msg")
}
_SYNTAX_TYPES = (SyntaxError, IndentationError, TabError)

_CAUSE_TEXT = "\nThe above exception was the direct cause of the following exception:\n\n"
_CONTEXT_TEXT = "\nDuring handling of the above exception, another exception occurred:\n\n"

_source_lines: list[str] = []
_cell_lines: dict[int, tuple[CodeType, list[str]]] = {}
"""Kernel mode: id of each code object an earlier cell compiled → (that code, the cell's lines), so a
function defined in one cell and failing in a later one shows its own cell's line. Keyed by identity:
hashing a code object would hash its constants, which a program can replace."""


def compile_program(source: str) -> CodeType:
    """Compile ``source`` into a module defining :data:`ENTRY`; raises ``SyntaxError``."""
    return wrap(list(parse_program(source).body))


def parse_program(source: str) -> ast.Module:
    """Parse ``source`` as the program whose lines tracebacks show from now on; raises ``SyntaxError``."""
    _source_lines[:] = source.splitlines()
    # For the program's own use (``traceback.print_exc()`` inside it); the worker reads _source_lines.
    linecache.cache[FILENAME] = (len(source), None, source.splitlines(keepends=True), FILENAME)
    return ast.parse(source, FILENAME, "exec")


def wrap(statements: list[ast.stmt]) -> CodeType:
    """A module defining ``async def`` :data:`ENTRY` with ``statements`` as its body (a trailing
    expression statement becomes its ``return``), compiled with their line numbers."""
    body: list[ast.stmt] = statements or [ast.Pass()]
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


def remember_lines(code: CodeType) -> None:
    """Kernel mode: tracebacks through ``code`` (and the functions defined in it) show the current
    program's lines even after the next cell has replaced them."""
    lines = list(_source_lines)
    waiting = [code]
    while waiting:
        current = waiting.pop()
        _cell_lines[id(current)] = (current, lines)
        waiting.extend(const for const in current.co_consts if type(const) is CodeType)


def error_summary(error: BaseException, limit: int) -> dict[str, Any]:
    """``type``, ``message`` and the program-only ``traceback`` of ``error``, never raising.

    ``message`` and ``traceback`` are at most ``limit`` characters plus a
    marker saying how many were cut (the message keeps its start, the
    traceback its start and end).
    """
    message = _message(error)
    try:
        trace = _Report().exception(error)
    except BaseException:  # a bug here must still leave a report, never a dead worker
        trace = f"{foreign.type_name(type(error))}: {foreign.clip(message, TRACE_MESSAGE_CHARS)}\n"
    return {
        "type": foreign.type_name(type(error)),
        "message": keep_head(message, limit),
        "traceback": keep_ends(trace, limit),
    }


def omitted(count: int) -> str:
    return messages.text("runtime.worker.omitted", count=count)


def keep_head(text: str, limit: int) -> str:
    """``text`` cut to its first ``limit`` characters, marked with how many were cut."""
    if len(text) <= limit:
        return text
    return text[: max(limit, 0)] + omitted(len(text) - max(limit, 0))


def keep_ends(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters from its start and end, marked in the middle."""
    if len(text) <= limit:
        return text
    limit = max(limit, 0)
    head = limit // 2
    tail = limit - head
    return text[:head] + omitted(len(text) - limit) + (text[len(text) - tail :] if tail else "")


def _message(error: BaseException) -> str:
    return foreign.text_of(error, STR_FAILED)


class _Report:
    """Formats one failure; counts the exceptions it has shown so chains and groups stay bounded."""

    def __init__(self) -> None:
        self._shown = 0
        self._seen: set[int] = set()

    def exception(self, error: BaseException) -> str:
        """The chain ending in ``error``, oldest first, as CPython prints it (program frames only)."""
        chain: list[tuple[BaseException, str]] = []
        current: BaseException | None = error
        connector = ""
        while current is not None and id(current) not in self._seen and self._shown < MAX_EXCEPTIONS:
            self._seen.add(id(current))
            self._shown += 1
            chain.append((current, connector))
            current, connector = _next_in_chain(current)
        parts: list[str] = []
        for link, connector in reversed(chain):
            parts.append(self._one(link))
            parts.append(connector)
        return "".join(parts)

    def _one(self, error: BaseException) -> str:
        lines = _frames(error)
        if lines:
            lines.insert(0, "Traceback (most recent call last):\n")
        lines.extend(_exception_only(error))
        if issubclass(type(error), BaseExceptionGroup):
            lines.extend(self._members(error))
        return "".join(lines)

    def _members(self, group: BaseException) -> list[str]:
        try:
            members = _MEMBERS.__get__(group)
        except BaseException:  # a class that only claims to be a group
            return []
        if type(members) is not tuple:
            return []
        lines: list[str] = []
        for index, member in enumerate(members, 1):
            if index > MAX_MEMBERS or self._shown >= MAX_EXCEPTIONS:
                lines.append(f"  +---- {len(members) - index + 1} more not shown ----\n")
                break
            lines.append(f"  +---- {index} of {len(members)} ----\n")
            for line in self.exception(member).splitlines(keepends=True):
                lines.append("  | " + line)
        return lines


def _next_in_chain(error: BaseException) -> tuple[BaseException | None, str]:
    cause = _CAUSE.__get__(error)
    if cause is not None:
        return cause, _CAUSE_TEXT
    context = _CONTEXT.__get__(error)
    if context is not None and not _SUPPRESS.__get__(error):
        return context, _CONTEXT_TEXT
    return None, ""


def _frames(error: BaseException) -> list[str]:
    """``File "<program>", line N, in name`` lines (with the source line) for the program's frames only."""
    found: list[tuple[int, str, list[str]]] = []
    tb: TracebackType | None = _TRACEBACK.__get__(error)
    walked = 0
    while tb is not None and walked < _MAX_WALK:
        walked += 1
        code = tb.tb_frame.f_code
        # co_filename is compared only as an exact str: a str subclass's __eq__ would run.
        if type(code.co_filename) is str and code.co_filename == FILENAME and type(tb.tb_lineno) is int:
            name = foreign.plain(code.co_name) or "?"
            shown = "<module>" if name == ENTRY else foreign.clip(name)
            found.append((tb.tb_lineno, shown, _lines_of(code)))
        tb = tb.tb_next
    lines: list[str] = []
    for lineno, name, program_lines in _collapse(found):
        if lineno < 0:
            lines.append(name)
            continue
        lines.append(f'  File "{FILENAME}", line {lineno}, in {name}\n')
        source = _source_line(lineno, program_lines)
        if source:
            lines.append(f"    {source}\n")
    return lines


def _lines_of(code: CodeType) -> list[str]:
    remembered = _cell_lines.get(id(code))
    if remembered is not None and remembered[0] is code:
        return remembered[1]
    return _source_lines


def _collapse(frames: list[tuple[int, str, list[str]]]) -> list[tuple[int, str, list[str]]]:
    """Runs of one frame beyond three become a count (as CPython does); beyond :data:`MAX_FRAMES` the
    middle is skipped. Entries with a negative line number are ready-made text lines."""
    out: list[tuple[int, str, list[str]]] = []
    index = 0
    while index < len(frames):
        end = index
        while end < len(frames) and frames[end] == frames[index]:
            end += 1
        run = end - index
        out.extend(frames[index : index + min(run, _REPEATS)])
        if run > _REPEATS:
            out.append((-1, f"  [Previous line repeated {run - _REPEATS} more times]\n", []))
        index = end
    if len(out) > MAX_FRAMES:
        head = MAX_FRAMES // 4
        tail = MAX_FRAMES - head
        skipped = len(out) - MAX_FRAMES
        out = [*out[:head], (-1, f"  [... {skipped} more frames ...]\n", []), *out[len(out) - tail :]]
    return out


def _source_line(lineno: int, lines: list[str]) -> str:
    if 1 <= lineno <= len(lines):
        return foreign.clip(lines[lineno - 1].strip(), LINE_CHARS)
    return ""


def _exception_only(error: BaseException) -> list[str]:
    """What CPython prints after the frames: the location of a syntax error, ``Type: message``, notes."""
    kind = type(error)
    name = foreign.type_name(kind)
    lines: list[str] = []
    message = None
    if any(kind is syntax for syntax in _SYNTAX_TYPES):
        fields = {key: descriptor.__get__(error) for key, descriptor in _SYNTAX_FIELDS.items()}
        lines.extend(_syntax_location(fields))
        message = foreign.plain(fields["msg"])
    if message is None:
        message = _message(error)
    message = foreign.clip(message, TRACE_MESSAGE_CHARS)
    lines.append(f"{name}: {message}\n" if message else f"{name}\n")
    lines.extend(_notes(error))
    return lines


def _syntax_location(fields: dict[str, Any]) -> list[str]:
    lineno, text, offset, end = fields["lineno"], fields["text"], fields["offset"], fields["end_offset"]
    if type(fields["filename"]) is not str or type(lineno) is not int:
        return []
    lines = [f'  File "{foreign.clip(fields["filename"])}", line {lineno}\n']
    if type(text) is not str:
        return lines
    stripped = text.rstrip("\n")
    code = stripped.lstrip()
    lines.append(f"    {foreign.clip(code, LINE_CHARS)}\n")
    if type(offset) is int:
        column = offset - 1 - (len(stripped) - len(code))
        width = end - offset if type(end) is int and end > offset else 1
        if 0 <= column < LINE_CHARS:
            lines.append("    " + " " * column + "^" * max(1, min(width, LINE_CHARS - column)) + "\n")
    return lines


def _notes(error: BaseException) -> list[str]:
    """``add_note()`` texts, read from the instance dict only if every piece is exactly what it should be."""
    try:
        attributes = _INSTANCE_DICT.__get__(error)
        if type(attributes) is not dict:
            return []
        # Pairs, not a lookup: looking "__notes__" up would compare it with colliding keys.
        notes = next(
            (value for key, value in list(attributes.items()) if type(key) is str and key == "__notes__"), None
        )
    except BaseException:  # anything odd about the instance dict: no notes
        return []
    if type(notes) is not list:
        return []
    lines: list[str] = []
    for note in notes[:MAX_MEMBERS]:
        text = foreign.plain(note)
        lines.append(f"{foreign.clip(text, LINE_CHARS)}\n" if text is not None else "<note is not a string>\n")
    return lines
