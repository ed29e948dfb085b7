"""The guest: the program the confined worker runs for a workflow script (ADR 0116).

:func:`guest_program` returns a ``run_code`` program (an async body) that
defines the script's namespace over the worker's ``tools`` — whose only
names are :data:`AGENT`, :data:`PHASE` and :data:`FATAL`, answered by the
host's :class:`~ptc_plus.workflow.lane.ChildLane` — checks the script again
with the rules of :mod:`.rules`, and runs it as an async function whose
globals hold only the namespace and the builtins of :data:`~.rules.BUILTINS`.

Inside the script:

- ``agent(prompt, **options)`` starts the child at once and returns an
  awaitable of its value (an un-awaited one still runs, and the host reaps
  it when the run ends);
- ``await parallel(thunks)``: each thunk called (or an awaitable awaited),
  all awaited, a failing item ``None``;
- ``await pipeline(items, *stages)``: per item ``stage(previous, item)`` in
  order (``previous`` is ``None`` for the first), no barrier between items;
  a stage that raises or gives ``None`` makes the item ``None`` and skips the rest;
- ``phase(name)`` names the run's current phase; ``log(*parts)`` writes one line to the run's log.

A fatal error (a cap, a bad ``agent`` call) is sent to the host as a
:data:`FATAL` call, which ends the run; the guest raises a ``BaseException``
meanwhile, so the script's ``except Exception`` does not swallow it.
"""

from __future__ import annotations

import re

import orjson

from ptc_plus.workflow.rules import BUILTINS, DENIED_ATTRIBUTES, DENIED_NAMES

AGENT = "agent"
PHASE = "phase"
FATAL = "fatal"
GUEST_TOOLS = (AGENT, FATAL, PHASE)

_PRELUDE = r'''
import ast as _ast
import asyncio as _aio
import builtins as _builtins
import json as _json

_CONF = _json.loads(__CONF__)
_ARGS = _json.loads(__ARGS__)
_SCRIPT = _json.loads(__SCRIPT__)
_host = tools
_loop = _aio.get_running_loop()
_slots = _aio.Semaphore(_CONF["in_flight"])
_background = set()
_OPTIONS = {"label": str, "phase": str, "schema": dict, "provider": str, "model": str}


class WorkflowFatal(BaseException):
    """A fatal error: the host ends the run."""


async def _fatal(code, **params):
    await _host.fatal(code=code, params={k: str(v) for k, v in params.items()})
    raise WorkflowFatal(code)


async def _start(args, options):
    if len(args) != 1 or not isinstance(args[0], str):
        await _fatal("PTC-8015", detail="agent() takes one positional argument, the prompt text")
    for name, value in options.items():
        kind = _OPTIONS.get(name)
        if kind is None or not (value is None or isinstance(value, kind)):
            await _fatal("PTC-8011", option=name)
    options = {k: v for k, v in options.items() if v is not None}
    async with _slots:
        reply = await _host.agent(prompt=args[0], options=options)
    return reply["value"]


class Pending:
    """A started child; await it for its value (``None``: it failed)."""

    __slots__ = ("_task",)

    def __init__(self, task):
        self._task = task

    def __await__(self):
        return self._task.__await__()

    def __repr__(self):
        return "<agent running>" if not self._task.done() else "<agent settled>"


def agent(*args, **options):
    return Pending(_loop.create_task(_start(args, options)))


async def _settle(item):
    try:
        return await (item() if callable(item) else item)
    except Exception:
        return None


async def _counted(items):
    items = list(items)
    if len(items) > _CONF["max_items"]:
        await _fatal("PTC-8014", count=len(items), limit=_CONF["max_items"])
    return items


async def parallel(thunks):
    items = await _counted(thunks)
    return list(await _aio.gather(*(_settle(item) for item in items)))


async def pipeline(items, *stages):
    items = await _counted(items)

    async def through(item):
        previous = None
        for stage in stages:
            try:
                previous = await stage(previous, item)
            except Exception:
                return None
            if previous is None:
                return None
        return previous

    return list(await _aio.gather(*(through(item) for item in items)))


def phase(name):
    task = _loop.create_task(_host.phase(name=str(name)))
    _background.add(task)
    task.add_done_callback(_background.discard)


def log(*parts):
    _builtins.print(" ".join(str(part) for part in parts))


for _node in _ast.walk(_ast.parse(_SCRIPT, "<workflow>", "exec")):
    _bad = (
        isinstance(_node, (_ast.Import, _ast.ImportFrom, _ast.ClassDef))
        or (isinstance(_node, _ast.Name) and (_node.id.startswith("_") or _node.id in _CONF["denied_names"]))
        or (
            isinstance(_node, _ast.Attribute)
            and (_node.attr.startswith("_") or _node.attr in _CONF["denied_attributes"])
        )
    )
    if _bad:
        raise SyntaxError("refused by the workflow rules", ("<workflow>", getattr(_node, "lineno", 0), 0, ""))

_tree = _ast.parse(_SCRIPT, "<workflow>", "exec")
_body = _tree.body or [_ast.Pass()]
if isinstance(_body[-1], _ast.Expr):
    _body[-1] = _ast.copy_location(_ast.Return(value=_body[-1].value), _body[-1])
_function = _ast.AsyncFunctionDef(
    name="__workflow__",
    args=_ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
    body=_body,
    decorator_list=[],
    returns=None,
    type_comment=None,
    lineno=1,
    col_offset=0,
)
_module = _ast.Module(body=[_function], type_ignores=[])
_ast.fix_missing_locations(_module)
_space = {
    "__builtins__": {name: getattr(_builtins, name) for name in _CONF["builtins"]},
    "agent": agent,
    "parallel": parallel,
    "pipeline": pipeline,
    "phase": phase,
    "log": log,
    "args": _ARGS,
}
exec(compile(_module, "<workflow>", "exec", dont_inherit=True), _space)
return await _space["__workflow__"]()
'''


def guest_program(script: str, args: object, *, in_flight: int, max_items: int) -> str:
    """The program running ``script`` with ``args`` (JSON) in the worker; the host checked it already."""
    conf = {
        "in_flight": in_flight,
        "max_items": max_items,
        "builtins": list(BUILTINS),
        "denied_names": sorted(DENIED_NAMES | {"Pending", "WorkflowFatal"}),
        "denied_attributes": sorted(DENIED_ATTRIBUTES),
    }

    def literal(value: object) -> str:
        # A JSON text inside a Python string literal: repr() of a str is always a valid literal.
        return repr(orjson.dumps(value).decode())

    values = {"CONF": literal(conf), "ARGS": literal(args), "SCRIPT": literal(script)}
    # One pass over the template: a placeholder's text inside the script or its args is never replaced.
    return re.sub(r"__(CONF|ARGS|SCRIPT)__", lambda found: values[found.group(1)], _PRELUDE)
