"""Looking at objects the program made without running the program's code.

After the program finishes, the worker still has to name and describe what
it left behind (its value, its exception). Python calls program-defined code
almost everywhere: ``isinstance`` reads ``__class__``, ``repr``/``str``/
f-strings call dunder methods, ``x in (a, b)`` and dict lookups call
``__eq__``/``__hash__``, ``obj.attr`` calls ``__getattribute__``/``__getattr__``
and a metaclass can intercept even ``cls.__qualname__``. The helpers here use
only exact ``type()`` checks, the C descriptors of the built-in types and
``issubclass`` against the worker's own classes (decided by the real MRO), so
a hostile object cannot make them raise, loop or lie. The one call that runs
program code on purpose, :func:`text_of`, is guarded and its result
normalized.

Host and child both import this module (through :mod:`.lossless`): standard
library only.
"""

from __future__ import annotations

from typing import Any

NAME_CHARS = 200
"""Type names, tool names and keys are cut to this many characters in messages."""

_PROGRAM_LOCALS = "__ptc_program__.<locals>."
"""Prefix of classes defined at the program's top level (its body is ``program.ENTRY``)."""

_QUALNAME = type.__dict__["__qualname__"]
_MODULE = type.__dict__["__module__"]


def plain(text: object) -> str | None:
    """``text`` as an exact ``str`` (a ``str`` subclass is copied, losing its methods); ``None`` otherwise."""
    kind = type(text)
    if kind is str:
        return text  # type: ignore[return-value]
    if issubclass(kind, str):
        return str.__str__(text)
    return None


def clip(text: str, limit: int = NAME_CHARS) -> str:
    """``text`` cut to ``limit`` characters, marked with an ellipsis when cut."""
    return text if len(text) <= limit else text[:limit] + "…"


def type_name(kind: type) -> str:
    """The qualified name of ``kind``, read from the type object itself, bounded.

    Classes defined at the top of the program lose the wrapper function's
    ``__ptc_program__.<locals>.`` prefix, so the name reads as the model wrote it.
    """
    try:
        name = plain(_QUALNAME.__get__(kind))
    except BaseException:  # nothing about a hostile type may escape
        name = None
    if name is None:
        return "?"
    if name.startswith(_PROGRAM_LOCALS):
        name = name[len(_PROGRAM_LOCALS) :]
    return clip(name)


def full_type_name(kind: type) -> str:
    """``module.qualname`` of ``kind`` (just the qualified name for built-ins and the program's classes)."""
    name = type_name(kind)
    try:
        module = plain(_MODULE.__get__(kind))
    except BaseException:  # nothing about a hostile type may escape
        module = None
    if module is None or module in ("builtins", "__ptc__"):
        return name
    return f"{clip(module)}.{name}"


def describe_key(key: object) -> str:
    """A short, safe description of a dict key: its ``repr`` for plain scalars, else its type."""
    kind = type(key)
    if kind is str:
        return repr(clip(key))  # type: ignore[arg-type]
    # Identity, not ``kind in (...)``: a metaclass's ``__eq__`` would run. Huge ints would not even print.
    if kind is bool or kind is float or key is None or (kind is int and -(2**64) < key < 2**64):  # type: ignore[operator]
        return repr(key)
    return f"of type {full_type_name(kind)}"


def text_of(obj: Any, fallback: str) -> str:
    """``str(obj)`` as an exact ``str``; ``fallback`` when it raises anything or returns something else.

    This runs the program's ``__str__`` (that is how an exception says what it
    means), but nothing it does can escape: not an exception, not
    ``SystemExit``, not a ``str`` subclass with methods of its own.
    """
    try:
        text = plain(str(obj))
    except BaseException:  # the program's __str__ may raise anything
        return fallback
    return fallback if text is None else text
