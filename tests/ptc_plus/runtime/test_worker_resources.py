"""The program's ``resources`` object (``ptc_plus.runtime.worker.resources``): sugar over two nested calls."""

from __future__ import annotations

from typing import Any

import pytest

from ptc_plus.runtime.worker.namespace import ToolCallError
from ptc_plus.runtime.worker.resources import LIST_TOOL, READ_TOOL, build_resources


@pytest.mark.asyncio
async def test_read_and_list_are_nested_calls_of_the_plugins_readers() -> None:
    sent: list[tuple[str, dict[str, Any]]] = []

    async def invoke(name: str, arguments: dict[str, Any]) -> Any:
        sent.append((name, arguments))
        return {"ok": name}

    resources = build_resources(invoke, frozenset({READ_TOOL, LIST_TOOL}))
    assert await resources.read("x://a") == {"ok": READ_TOOL}
    await resources.read("x://a", server="s")
    await resources.list("s")
    assert sent == [
        (READ_TOOL, {"uri": "x://a"}),
        (READ_TOOL, {"uri": "x://a", "server": "s"}),
        (LIST_TOOL, {"server": "s"}),
    ]


@pytest.mark.asyncio
async def test_without_the_readers_nothing_is_sent_and_the_object_is_read_only() -> None:
    async def invoke(name: str, arguments: dict[str, Any]) -> Any:
        raise AssertionError("nothing may be sent")

    resources = build_resources(invoke, frozenset())
    with pytest.raises(ToolCallError) as failed:
        await resources.read("x://a")
    assert failed.value.code == "PTC-7008" and failed.value.tool_name == READ_TOOL
    with pytest.raises(AttributeError):
        resources.read = None
    with pytest.raises(AttributeError):
        resources.nothing  # noqa: B018
    assert dir(resources) == ["list", "read"]
