"""One run's BFCL world: fresh backend instances for the task's classes, and their methods as host tools.

:class:`BfclWorld` is what the suite's ``world`` factory returns; the task's
``setup`` loads it (:meth:`BfclWorld.load`), and ``tools`` then offers the
methods of exactly the involved classes, each with its function doc's
contract (:mod:`.schemas`). A call runs the backend's method on this run's
instance; its return value reaches the model as JSON. A method that raises
fails the call (BFCL records ``Error during execution: ...``; here the
failure carries that text). Results the backends report as ``{"error": ...}``
are ordinary results, as in BFCL.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from hookspecs.services import ToolContext, ToolDefinition, ToolFailure
from hookspecs.types import JSONObject, JSONValue, ToolSpec

from .backends import fresh_instances, jsonable
from .schemas import class_docs, class_specs, tool_name
from .wheel import Wheel

BACKEND_ERROR = "bfcl-backend-error"
"""The failure code of a call whose backend method raised."""


def method_owners(wheel: Wheel, classes: Sequence[str]) -> dict[str, str]:
    """Tool name → the class whose method it is, for the documented functions of ``classes``."""
    owners: dict[str, str] = {}
    for name in classes:
        for doc in class_docs(wheel, name):
            owners[tool_name(str(doc["name"]))] = name
    return owners


def invoke(instances: Mapping[str, Any], owners: Mapping[str, str], tool: str, arguments: JSONObject) -> JSONValue:
    """Run ``tool`` on its instance with ``arguments``; the result as JSON.

    :raises ToolFailure: the method raised (``bfcl-backend-error``, BFCL's error text).
    """
    method = getattr(instances[owners[tool]], tool)
    try:
        result = method(**arguments)
    except Exception as error:  # the backend's own failure, reported to the model as BFCL reports it
        raise ToolFailure(BACKEND_ERROR, f"Error during execution: {error}") from None
    return jsonable(result)


@attrs.define(kw_only=True)
class BfclWorld:
    """A run's backends (empty until :meth:`load`) and the calls that reached them."""

    wheel: Wheel
    task_id: str = ""
    classes: tuple[str, ...] = ()
    instances: dict[str, Any] = attrs.field(factory=dict)
    calls: list[tuple[str, JSONObject]] = attrs.field(factory=list)
    """Every call that reached a backend, in order (failed ones too)."""

    def load(self, task_id: str, classes: Sequence[str], initial_config: Mapping[str, Any]) -> None:
        """Fresh instances of ``classes`` loaded with ``initial_config`` (BFCL's ``_load_scenario``)."""
        self.task_id, self.classes = task_id, tuple(classes)
        self.instances = fresh_instances(self.wheel, classes, initial_config)
        self.calls.clear()

    def call(self, tool: str, arguments: JSONObject) -> JSONValue:
        """Run ``tool`` of the loaded classes on this world's instance, recorded in :attr:`calls`.

        :raises ToolFailure: the method raised (:data:`BACKEND_ERROR`).
        """
        self.calls.append((tool, dict(arguments)))
        return invoke(self.instances, method_owners(self.wheel, self.classes), tool, dict(arguments))

    def specs(self) -> list[ToolSpec]:
        return [spec for name in self.classes for spec in class_specs(self.wheel, name)]

    def tools(self) -> list[ToolDefinition]:
        """The involved classes' methods as executable tools over this world."""

        def bind(spec: ToolSpec) -> ToolDefinition:
            async def handler(arguments: JSONObject, context: ToolContext) -> JSONValue:
                return self.call(spec.name, arguments)

            return ToolDefinition(spec=spec, handler=handler)

        return [bind(spec) for spec in self.specs()]
