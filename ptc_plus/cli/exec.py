"""``ptc-plus exec``: run one program through ``run_code`` on the reference host and print the outcome.

The program goes through the full pipeline a model's call would take
(validation, guard, ``tool-execute`` seam, ordered scheduler, session log),
against the demo tools (``--tools demo``), a tool factory
(``--tools module:factory``, called with the workspace path) or no tools.
With a tool set, programs can use ``capabilities.*`` over a snapshot of
those tools, built once before the run. The result carries the run's
``notes`` (e.g. a clamped timeout) in both output forms.
Exit code: 0 the program succeeded, 1 it failed, 2 usage error.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import math
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from hookspecs import AgentRef, ResultStatus, ToolDefinition, ToolResult
from ptc_plus.capabilities import CatalogSnapshot, build_catalog, build_snapshot
from ptc_plus.config import WORKSPACE_DIR
from ptc_plus.errors import UsageError
from ptc_plus.i18n import message
from ptc_plus.runtime import (
    CodeRuntime,
    DiscoveryProvider,
    RunLimits,
    SandboxPolicy,
    UnknownToolSet,
    limits_from_environment,
    run_code_definition,
)


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser("exec", help=message("cli.exec.help"), description=message("cli.exec.help"))
    parser.add_argument("file", nargs="?", default="-", help=message("cli.exec.file"))
    parser.add_argument(
        "--policy",
        choices=[str(p) for p in SandboxPolicy],
        default=str(SandboxPolicy.WORKSPACE_WRITE),
        help=message("cli.exec.policy"),
    )
    parser.add_argument("--timeout", type=float, default=None, help=message("cli.exec.timeout"))
    parser.add_argument("--workspace", default=".", help=message("cli.exec.workspace"))
    parser.add_argument("--tools", default=None, help=message("cli.exec.tools"))
    parser.add_argument("--json", action="store_true", help=message("cli.exec.json"))
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.timeout is not None and not (math.isfinite(args.timeout) and args.timeout > 0):
        raise UsageError(detail=message("cli.exec.bad_timeout"))
    workspace = Path(args.workspace).resolve()
    if not workspace.is_dir():
        raise UsageError(detail=message("cli.exec.bad_workspace", path=str(workspace)))
    code = _read_program(args.file)
    tools = load_tools(args.tools, workspace)
    limits = limits_from_environment(RunLimits(policy=args.policy, warm_spare=False))
    arguments: dict[str, Any] = {"description": f"ptc-plus exec {args.file}", "code": code}
    if args.timeout is not None:
        arguments["timeout_s"] = args.timeout
    result = asyncio.run(_execute(workspace, tools, limits, arguments))
    shape = result_shape(result)
    if args.json:
        sys.stdout.write(orjson.dumps(shape).decode("utf-8") + "\n")
    else:
        _print_human(shape, result)
    return 0 if shape["ok"] else 1


def _read_program(file: str) -> str:
    try:
        return sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(detail=message("cli.exec.unreadable", path=file, detail=str(error))) from None


def load_tools(spec: str | None, workspace: Path) -> list[ToolDefinition]:
    """The tool set named by ``--tools`` (none when ``spec`` is ``None``)."""
    if spec is None:
        return []
    if spec == "demo":
        from hookspecs.reference.demo_tools import demo_tool_definitions

        return list(demo_tool_definitions(workspace))
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise UnknownToolSet(name=spec, detail="expected demo or module:factory")
    try:
        factory = getattr(importlib.import_module(module_name), attribute)
        tools = list(factory(workspace))
    except Exception as error:
        raise UnknownToolSet(name=spec, detail=f"{type(error).__name__}: {error}") from None
    if not all(isinstance(tool, ToolDefinition) for tool in tools):
        raise UnknownToolSet(name=spec, detail="the factory must return ToolDefinition objects")
    return tools


async def _execute(
    workspace: Path, tools: Sequence[ToolDefinition], limits: RunLimits, arguments: dict[str, Any]
) -> ToolResult:
    from hookspecs.reference import ReferenceHost

    runtime = CodeRuntime(limits, owner_paths=(WORKSPACE_DIR,))
    definition = run_code_definition(runtime=runtime, discovery=discovery_for(tools))
    with tempfile.TemporaryDirectory(prefix="ptc-exec-") as state:
        host = ReferenceHost(
            workspace=workspace,
            state_dir=Path(state),
            tools=[*tools, definition],
            load_entry_points=False,
        )
        try:
            async with host:
                session = await host.start_session(user_id="exec", title="ptc-plus exec")
                return await session.call_tool("run_code", arguments)
        finally:
            await runtime.aclose()


def discovery_for(tools: Sequence[ToolDefinition]) -> DiscoveryProvider | None:
    """A provider answering every caller from one snapshot of ``tools`` (none without tools)."""
    if not tools:
        return None
    snapshot = build_snapshot(build_catalog(tools=[tool.spec for tool in tools]))

    def provider(agent: AgentRef) -> CatalogSnapshot:
        return snapshot

    return provider


def result_shape(result: ToolResult) -> dict[str, Any]:
    """``{"ok", "value", "error", "logs", "calls", "notes"}`` from the host's settled ``run_code`` result."""
    if result.ok:
        body = result.value
        shape = {"ok": True, "value": body["value"], "error": None, "logs": body["logs"], "calls": body["calls"]}
        return {**shape, "notes": list(body.get("notes", []))}
    data = dict(result.error.data) if result.error is not None else {}
    fallback = "abort" if result.status is ResultStatus.CANCELLED else "exception"
    kind = str(data.get("kind", fallback))
    # ``data["message"]``: the outcome's own message (the error's message is the model's full report).
    text = data.get("message", result.error.message) if result.error else str(result.status)
    error: dict[str, Any] = {"kind": kind, "message": text}
    if data.get("tool_name") is not None:
        error["tool_name"] = data["tool_name"]
    shape = {"ok": False, "value": None, "error": error, "logs": data.get("logs", []), "calls": data.get("calls", 0)}
    return {**shape, "notes": list(data.get("notes", []))}


def _print_human(shape: dict[str, Any], result: ToolResult) -> None:
    for entry in shape["logs"]:
        stream = sys.stdout if entry["stream"] in ("stdout", "fd1") else sys.stderr
        stream.write(entry["text"])
    for note in shape["notes"]:
        print(message("cli.exec.note", note=note), file=sys.stderr)
    if shape["ok"]:
        print(message("cli.exec.value", value=orjson.dumps(shape["value"]).decode("utf-8")))
        return
    error = shape["error"]
    traceback = result.error.data.get("traceback") if result.error is not None else None
    if traceback:
        sys.stderr.write(str(traceback))
    print(message("cli.exec.error", kind=error["kind"], message=error["message"]), file=sys.stderr)
