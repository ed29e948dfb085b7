"""BFCL's stateful backends (file system, messaging, posting, tickets, trading, travel, vehicle, math), from the wheel.

The backend modules are compiled from the wheel's text under a private
package name of ours, so the wheel's top-level package (which imports its
heavy dependencies) is never imported. Their only import of ``bfcl_eval`` is
of a sibling backend module (``long_context``); it is rewritten to a relative
import before compiling. Any other ``bfcl_eval`` import is refused.

A run's backends are fresh instances, loaded with the task's
``initial_config`` as BFCL loads them (``_load_scenario`` of a deep copy;
``MathAPI`` is stateless and loads nothing).
"""

from __future__ import annotations

import ast
import copy
import math
import sys
import types
from collections.abc import Mapping, Sequence
from typing import Any

from hookspecs.types import JSONValue

from .errors import BfclBackendRejected
from .wheel import BACKENDS, Wheel

CLASS_MODULES: Mapping[str, str] = {
    "GorillaFileSystem": "gorilla_file_system",
    "MathAPI": "math_api",
    "MessageAPI": "message_api",
    "TwitterAPI": "posting_api",
    "TicketAPI": "ticket_api",
    "TradingBot": "trading_bot",
    "TravelAPI": "travel_booking",
    "VehicleControlAPI": "vehicle_control",
}
"""The multi-turn classes and their modules (BFCL's ``CLASS_FILE_PATH_MAPPING``), in BFCL's order."""
STATELESS = frozenset({"MathAPI"})
"""Classes BFCL never loads a scenario into."""

_PREFIX = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"


def _package_name(wheel: Wheel) -> str:
    return "ptc_bfcl_backends_" + wheel.path.name.removesuffix(".whl").replace(".", "_").replace("-", "_")


def _relative(tree: ast.Module, module: str) -> list[str]:
    """Rewrite the sibling imports to relative ones; the siblings it names, to load first."""
    siblings: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "bfcl_eval" for a in node.names):
            raise BfclBackendRejected(module=module, imported=", ".join(a.name for a in node.names))
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "bfcl_eval":
            name = node.module or ""
            sibling = name.removeprefix(_PREFIX + ".")
            if sibling == name or "." in sibling:
                raise BfclBackendRejected(module=module, imported=name)
            node.module, node.level = sibling, 1
            siblings.append(sibling)
    return siblings


def load_module(wheel: Wheel, module: str) -> types.ModuleType:
    """The backend module ``module`` (``posting_api``) compiled from the wheel, once per process."""
    package = _package_name(wheel)
    if package not in sys.modules:
        holder = types.ModuleType(package, "BFCL's multi-turn backends, compiled from the pinned wheel.")
        holder.__path__ = []
        sys.modules[package] = holder
    qualified = f"{package}.{module}"
    if qualified in sys.modules:
        return sys.modules[qualified]
    source = wheel.text(f"{BACKENDS}{module}.py")
    tree = ast.parse(source, filename=f"{wheel.path.name}/{BACKENDS}{module}.py")
    for sibling in _relative(tree, module):
        load_module(wheel, sibling)
    loaded = types.ModuleType(qualified)
    loaded.__package__ = package
    loaded.__file__ = f"{wheel.path}/{BACKENDS}{module}.py"
    sys.modules[qualified] = loaded
    try:
        exec(compile(tree, loaded.__file__, "exec"), loaded.__dict__)  # the wheel's backend code, the one thing we run
    except BaseException:
        del sys.modules[qualified]
        raise
    return loaded


def backend_class(wheel: Wheel, name: str) -> type:
    """The class ``name`` (``TwitterAPI``) of the wheel."""
    cls: type = getattr(load_module(wheel, CLASS_MODULES[name]), name)
    return cls


def fresh_instances(wheel: Wheel, classes: Sequence[str], initial_config: Mapping[str, Any]) -> dict[str, Any]:
    """One new instance per class, loaded with its part of ``initial_config`` as BFCL loads it."""
    instances: dict[str, Any] = {}
    for name in classes:
        instance = backend_class(wheel, name)()
        if name not in STATELESS:
            instance._load_scenario(copy.deepcopy(dict(initial_config.get(name, {}))), long_context=False)
        instances[name] = instance
    return instances


def public_state(instance: Any) -> dict[str, Any]:
    """What BFCL's ``state_checker`` compares: the instance's attributes not starting with ``_``."""
    return {key: value for key, value in vars(instance).items() if not key.startswith("_")}


def state_differences(actual: Any, expected: Any) -> list[str]:
    """BFCL's ``_compare_instances``: every public attribute of ``expected`` that ``actual`` holds differently."""
    if type(actual) is not type(expected):
        return [f"{type(actual).__name__} is not {type(expected).__name__}"]
    missing = object()
    return [key for key, value in public_state(expected).items() if getattr(actual, key, missing) != value]


def fingerprint(value: Any, seen: frozenset[int] = frozenset()) -> Any:
    """A comparable picture of ``value`` with private attributes too (``GorillaFileSystem``'s working directory).

    Used to tell which calls change a backend's state (so they keep their order); cycles (a directory's
    parent) are cut at the object already being walked.
    """
    if isinstance(value, (str, int, float, bool, type(None))):
        return value
    if id(value) in seen:
        return ("<cycle>", type(value).__name__)
    inner = seen | {id(value)}
    if isinstance(value, Mapping):
        return ("map", tuple(sorted((repr(k), fingerprint(v, inner)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        return ("seq", tuple(fingerprint(v, inner) for v in value))
    if isinstance(value, (set, frozenset)):
        return ("set", tuple(sorted(repr(fingerprint(v, inner)) for v in value)))
    getstate = getattr(value, "getstate", None)
    if callable(getstate) and type(value).__module__ == "random":
        return ("random", getstate())
    if hasattr(value, "__dict__"):
        return (type(value).__name__, fingerprint(vars(value), inner))
    return (type(value).__name__, repr(value))


def jsonable(value: Any) -> JSONValue:
    """A backend's return value as JSON (tuples and sets as lists, keys as text, anything else as its text)."""
    if isinstance(value, bool) or value is None or isinstance(value, (str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return [jsonable(v) for v in sorted(value, key=repr)]
    return str(value)
