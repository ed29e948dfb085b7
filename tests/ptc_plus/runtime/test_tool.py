"""The ``run_code`` tool definition: schema, result shape, failures, timeout rules, shutdown."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from hookspecs import Concurrency, ToolFailure
from ptc_plus.runtime.code_runtime import CodeRuntime
from ptc_plus.runtime.errors import InvalidLimits, InvalidTimeout, RuntimeClosed
from ptc_plus.runtime.run_limits import RunLimits, resolve_timeout
from ptc_plus.runtime.tool import run_code_definition

from .conftest import FakeServices, limits_with, outer_context


def test_defaults_follow_the_spec() -> None:
    limits = RunLimits()
    assert (limits.timeout_s, limits.max_timeout_s, limits.grace_s) == (120.0, 600.0, 3.0)
    assert limits.max_output_bytes == 64 * 2**20 and limits.memory_bytes == 512 * 2**20
    assert limits.max_message_bytes == 128 * 2**20 and limits.max_pending_calls == 128
    assert str(limits.policy) == "workspace-write" and limits.network is False


def test_invalid_limits_raise() -> None:
    with pytest.raises(InvalidLimits):
        RunLimits(timeout_s=0)
    with pytest.raises(InvalidLimits):
        RunLimits(timeout_s=700)
    with pytest.raises(ValueError):
        RunLimits(policy="yolo")


@pytest.mark.parametrize("value", [0, -1, float("nan"), float("inf"), "10", True])
def test_timeout_must_be_positive(value: Any) -> None:
    with pytest.raises(InvalidTimeout):
        resolve_timeout(value, RunLimits())


def test_timeout_above_the_cap_is_clamped() -> None:
    resolved = resolve_timeout(3600, RunLimits())
    assert resolved.seconds == 600 and resolved.clamped_from == 3600
    assert resolve_timeout(None, RunLimits()).seconds == 120
    assert resolve_timeout(2.5, RunLimits()).clamped_from is None


def test_spec_and_concurrency() -> None:
    definition = run_code_definition(RunLimits())
    assert definition.spec.name == "run_code" and definition.spec.source == "plugin:ptc_plus"
    assert definition.spec.input_schema["required"] == ["description", "code"]
    assert definition.spec.concurrency is Concurrency.EXCLUSIVE
    assert run_code_definition(RunLimits(policy="read-only")).spec.concurrency is Concurrency.PARALLEL


@pytest.mark.asyncio
async def test_handler_success_and_failure_shapes(workspace: Path) -> None:
    runtime = CodeRuntime(limits_with())
    try:
        definition = run_code_definition(runtime=runtime)
        services = FakeServices(workspace)
        value = await definition.handler(
            {"description": "d", "code": "print('x')\n7", "timeout_s": 9999}, outer_context(services)
        )
        assert value["value"] == 7 and value["logs"] == [{"stream": "stdout", "text": "x\n"}]
        assert value["calls"] == 0 and "600" in value["notes"][0]
        with pytest.raises(ToolFailure) as caught:
            await definition.handler(
                {"description": "d", "code": "print('before')\nraise KeyError('k')"}, outer_context(services)
            )
        assert caught.value.code == "PTC-2101"
        assert caught.value.data["kind"] == "exception"
        assert caught.value.data["logs"] == [{"stream": "stdout", "text": "before\n"}]
        with pytest.raises(ToolFailure) as caught:
            await definition.handler({"description": "d", "code": "1", "timeout_s": 0}, outer_context(services))
        assert caught.value.code == "PTC-2002"
    finally:
        await runtime.aclose()


@pytest.mark.asyncio
async def test_debug_run_flag_reaches_the_program(workspace: Path) -> None:
    runtime = CodeRuntime(limits_with(debug_run=True))
    try:
        outcome = await runtime.run("import os\nos.environ['PTC_DEBUG_RUN']", workspace=workspace)
        assert outcome.value == "true"
    finally:
        await runtime.aclose()


@pytest.mark.asyncio
async def test_warm_spare_is_used_and_each_run_is_a_fresh_process(workspace: Path) -> None:
    runtime = CodeRuntime(limits_with(warm_spare=True))
    try:
        pids = []
        for _ in range(3):
            outcome = await runtime.run("import os\nos.getpid()", workspace=workspace)
            pids.append(outcome.value)
        assert len(set(pids)) == 3
        spare = runtime._launcher.spare
        assert spare is not None
    finally:
        await runtime.aclose()
    assert runtime._launcher.spare is None


@pytest.mark.asyncio
async def test_close_aborts_live_runs_and_refuses_new_ones(workspace: Path) -> None:
    runtime = CodeRuntime(limits_with())
    live = asyncio.create_task(runtime.run("while True:\n    pass", workspace=workspace))
    while not runtime._live:
        await asyncio.sleep(0)
    await runtime.aclose()
    outcome = await live
    assert outcome.failure is not None and str(outcome.failure.kind) == "abort"
    with pytest.raises(RuntimeClosed):
        await runtime.run("1", workspace=workspace)


@pytest.mark.asyncio
async def test_close_nowait_for_synchronous_shutdown_hooks(workspace: Path) -> None:
    runtime = CodeRuntime(limits_with(warm_spare=True))
    definition = run_code_definition(runtime=runtime)
    services = FakeServices(workspace)
    await runtime.run("1", workspace=workspace)
    live = asyncio.create_task(runtime.run("while True:\n    pass", workspace=workspace))
    while not runtime._live:
        await asyncio.sleep(0)
    runtime.close_nowait()
    outcome = await live
    assert outcome.failure is not None and str(outcome.failure.kind) == "abort"
    with pytest.raises(ToolFailure) as caught:
        await definition.handler({"description": "d", "code": "1"}, outer_context(services))
    assert caught.value.code == "PTC-2003"
    await runtime.aclose()
