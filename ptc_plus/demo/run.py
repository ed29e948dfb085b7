"""Run the demo: a complete scripted session on the reference host, printed step by step."""

from __future__ import annotations

import importlib.resources
from collections.abc import Callable
from pathlib import Path

import orjson

from hookspecs.i18n import message
from hookspecs.reference import ReferenceHost, ScriptedModel, Session
from hookspecs.reference.demo_tools import demo_tool_definitions
from ptc_plus.demo.workspace import seed_workspace

Printer = Callable[[str], None]

DEMO_USER = "demo-user"


def _script_path() -> Path:
    return Path(str(importlib.resources.files("ptc_plus.demo").joinpath("script.jsonl")))


def _short(value: object, limit: int = 160) -> str:
    text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _print_calls(session: Session, since: int, out: Printer) -> None:
    for event in session.log.events[since:]:
        data = event.data
        if event.type == "tool-started":
            out(f"  → {data['call_id']} {data['tool']}({_short(data['arguments'])})")
        elif event.type == "tool-settled":
            result = data["result"]
            shown = result["value"] if result["status"] == "ok" else result["error"]
            out(f"  ← {data['call_id']} {result['status']}: {_short(shown)}")


async def run_demo(workspace: Path, out: Printer = print) -> int:
    """Run the scripted session in ``workspace`` and print what happened; returns the exit code."""
    workspace.mkdir(parents=True, exist_ok=True)
    seed_workspace(workspace)
    model = ScriptedModel.from_jsonl(_script_path())
    out(message("demo.workspace", path=str(workspace)))
    async with ReferenceHost(workspace=workspace, tools=demo_tool_definitions(workspace), user_id=DEMO_USER) as host:
        out(message("demo.plugins", names=", ".join(sorted(n for n, _ in host.facade.pm.list_name_plugin()))))
        session = await host.start_session(title="demo", model=model)
        out(message("demo.prompt-sections"))
        for section in session.prompt_sections():
            out(f"  [{section.order:>3} {section.name}] {section.text.splitlines()[0]}")
        question = message("demo.question")
        out(message("demo.user", text=question))
        before = len(session.log.events)
        summary = await session.run_turn(question)
        _print_calls(session, before, out)
        out(message("demo.assistant", text=summary.final_text, steps=summary.steps, calls=summary.tool_calls))
        for line in ("/tools", "/compact"):
            receipt = session.command(line)
            out(f"{line} [{receipt.status.value}] " + receipt.text.replace("\n", "; "))
        session_id = session.agent.session_id
        requests = len(model.requests)
    async with ReferenceHost(workspace=workspace, tools=demo_tool_definitions(workspace), user_id=DEMO_USER) as host:
        resumed = await host.resume_session(session_id)
        out(message("demo.resumed", events=len(resumed.log.events), visible=len(resumed.surface.entries)))
    out(message("demo.model-requests", count=requests))
    return 0
