"""What a ``--tools`` value names, the same for every command (ADR 0064).

One of:

- ``demo``: the reference host's demo tools, bound to the workspace;
- a JSON tools file (any shape :mod:`.tools_file` reads): the tools' contracts
  only. Commands that only describe tools (``sdk``, ``capabilities
  plan|search``) need nothing more; a command that runs them (``exec``) gets
  bodies that fail with :class:`ToolNotImplemented`, so a program sees a
  ``ToolCallError`` saying the file has no implementation rather than a
  made-up value;
- ``module:factory``: ``factory(workspace)`` from ``module``, importable from
  the current directory (as ``python -m`` would find it) or from the installed
  packages, returning :class:`~hookspecs.ToolDefinition` objects.

A value is read as a file when it names an existing file, ends in ``.json``
or contains a path separator; else as ``module:factory`` when it has that
form (``demo`` is always the demo set: write ``./demo`` for a file of that name).
"""

from __future__ import annotations

import contextlib
import enum
import functools
import importlib
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

from hookspecs import JSONObject, JSONValue, ToolContext, ToolDefinition, ToolFailure, ToolHandler, ToolSpec
from ptc_plus.sdk.errors import (
    ToolFactoryResult,
    ToolModuleNotFound,
    ToolNotImplemented,
    ToolSetNotRecognized,
    ToolSetUnavailable,
)
from ptc_plus.sdk.tools_file import load_tool_specs

DEMO_TOOL_SET = "demo"
"""The ``--tools`` value naming the reference host's demo tools."""
_FACTORY = re.compile(r"(?P<module>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*):(?P<attribute>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)")


class ToolSetKind(enum.StrEnum):
    DEMO = "demo"
    FILE = "file"
    FACTORY = "factory"


@attrs.frozen(kw_only=True)
class ToolSet:
    """The tools one ``--tools`` value names.

    :ivar name: the value as given.
    :ivar kind: how it was read.
    :ivar definitions: the tools with their bodies, in the source's order; for a
        :attr:`ToolSetKind.FILE` every body fails with :class:`ToolNotImplemented`.
    """

    name: str
    kind: ToolSetKind
    definitions: tuple[ToolDefinition, ...]

    @property
    def specs(self) -> tuple[ToolSpec, ...]:
        """The tools' contracts (what ``sdk`` and ``capabilities`` need)."""
        return tuple(definition.spec for definition in self.definitions)

    @property
    def implemented(self) -> bool:
        """Whether calling a tool runs a real body (false for a JSON tools file)."""
        return self.kind is not ToolSetKind.FILE


def load_tool_set(value: str, workspace: Path, *, cwd: Path | None = None) -> ToolSet:
    """The tool set ``value`` names (see the module docstring), bound to ``workspace``.

    ``cwd`` (default: the current directory) is where a relative file is read
    and where a factory's module is looked for first.

    :raises InvalidToolsFile: a tools file that cannot be read or has the wrong shape.
    :raises ToolSetUnavailable: any other value that names no loadable tool set (a subclass says why:
        :class:`ToolSetNotRecognized`, :class:`ToolModuleNotFound`, :class:`ToolFactoryResult`; this class
        itself when the module or the factory raised).
    """
    base = Path.cwd() if cwd is None else cwd
    if value == DEMO_TOOL_SET:
        from hookspecs.reference.demo_tools import demo_tool_definitions

        return ToolSet(name=value, kind=ToolSetKind.DEMO, definitions=tuple(demo_tool_definitions(workspace)))
    path = base / value
    if path.is_file() or value.lower().endswith(".json") or os.sep in value or "/" in value:
        specs = load_tool_specs(path)
        definitions = tuple(ToolDefinition(spec=spec, handler=_unimplemented(spec.name, value)) for spec in specs)
        return ToolSet(name=value, kind=ToolSetKind.FILE, definitions=definitions)
    found = _FACTORY.fullmatch(value)
    if found is None:
        raise ToolSetNotRecognized(name=value)
    definitions = _from_factory(value, found["module"], found["attribute"], workspace, base)
    return ToolSet(name=value, kind=ToolSetKind.FACTORY, definitions=definitions)


def _unimplemented(tool: str, path: str) -> ToolHandler:
    async def handler(arguments: JSONObject, context: ToolContext) -> JSONValue:
        error = ToolNotImplemented(tool=tool, path=path)
        raise ToolFailure(error.code, error.message())

    return handler


def _from_factory(
    value: str, module_name: str, attribute: str, workspace: Path, base: Path
) -> tuple[ToolDefinition, ...]:
    try:
        with _importable_from(base):
            module = importlib.import_module(module_name)
            factory: Any = functools.reduce(getattr, attribute.split("."), module)
            tools = tuple(factory(workspace))
    except ModuleNotFoundError as error:
        if error.name is not None and (module_name == error.name or module_name.startswith(error.name + ".")):
            raise ToolModuleNotFound(name=value, module=error.name, directory=str(base)) from None
        raise ToolSetUnavailable(name=value, detail=f"{type(error).__name__}: {error}") from None
    except Exception as error:  # the user's module and factory may fail in any way: say how, no traceback
        raise ToolSetUnavailable(name=value, detail=f"{type(error).__name__}: {error}") from None
    wrong = [type(tool).__name__ for tool in tools if not isinstance(tool, ToolDefinition)]
    if wrong:
        raise ToolFactoryResult(name=value, type=wrong[0])
    return tools


@contextlib.contextmanager
def _importable_from(directory: Path) -> Iterator[None]:
    """Modules in ``directory`` importable while the factory is imported and called (an installed
    console script's ``sys.path`` starts at its own ``bin``, not the current directory)."""
    entry = str(directory.resolve())
    added = entry not in sys.path
    if added:
        sys.path.insert(0, entry)
    importlib.invalidate_caches()
    try:
        yield
    finally:
        if added:
            with contextlib.suppress(ValueError):
                sys.path.remove(entry)
