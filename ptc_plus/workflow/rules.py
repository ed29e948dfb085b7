"""What a workflow script may name: the one rule set the host's check and the guest's apply (ADR 0116).

A workflow script reaches only :data:`NAMESPACE` and the plain builtins of
:data:`BUILTINS`. Everything else is refused by :mod:`.check` before the run
starts, and the guest applies the same rules again inside the worker:

- no ``import`` and no ``class`` statement;
- no name and no attribute starting with ``_`` (every dunder escape starts there);
- no name of :data:`DENIED_NAMES` (the worker's own namespace, the builtins that reach
  objects, files, code or frames) and no attribute of :data:`DENIED_ATTRIBUTES`
  (the frame, code and event-loop handles of generators, coroutines, tracebacks and tasks).

These are a language context, not the boundary: the script runs in the
confined worker of ``run_code`` under ``read-only`` with no network, and the
host answers only the namespace's own calls (the sandbox of `run_code` stays the real boundary).
"""

from __future__ import annotations

NAMESPACE = ("agent", "parallel", "pipeline", "phase", "log", "args")
"""The names a workflow script is given."""

BUILTINS = (
    "abs",
    "all",
    "any",
    "bool",
    "dict",
    "enumerate",
    "filter",
    "float",
    "frozenset",
    "int",
    "isinstance",
    "len",
    "list",
    "map",
    "max",
    "min",
    "range",
    "repr",
    "reversed",
    "round",
    "set",
    "sorted",
    "str",
    "sum",
    "tuple",
    "zip",
    "Exception",
    "ValueError",
    "KeyError",
    "TypeError",
    "IndexError",
    "RuntimeError",
)
"""The builtins a script keeps: values and their plain operations, nothing that reaches files, code or frames."""

DENIED_NAMES = frozenset(
    {
        "tools",
        "capabilities",
        "ToolCallError",
        "open",
        "print",
        "input",
        "eval",
        "exec",
        "compile",
        "globals",
        "locals",
        "vars",
        "dir",
        "getattr",
        "setattr",
        "delattr",
        "hasattr",
        "type",
        "object",
        "super",
        "memoryview",
        "breakpoint",
        "help",
        "classmethod",
        "staticmethod",
        "property",
        "BaseException",
        "SystemExit",
        "KeyboardInterrupt",
        "GeneratorExit",
    }
)
"""Names refused outright (most are also absent at run time): the worker's own namespace and reflective builtins."""

DENIED_ATTRIBUTES = frozenset(
    {
        "gi_frame",
        "gi_code",
        "gi_yieldfrom",
        "gi_running",
        "cr_frame",
        "cr_code",
        "cr_await",
        "cr_origin",
        "ag_frame",
        "ag_code",
        "ag_await",
        "f_back",
        "f_globals",
        "f_locals",
        "f_builtins",
        "f_code",
        "tb_frame",
        "tb_next",
        "with_traceback",
        "get_coro",
        "get_loop",
        "get_stack",
        "print_stack",
        "mro",
        "format_map",
    }
)
"""Attributes refused: the handles from a value to frames, code, globals or the event loop."""
