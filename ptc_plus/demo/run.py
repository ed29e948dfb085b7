"""Run the demo: a complete scripted session on the reference host, printed step by step.

The model's script depends on what the session got: with code mode on, one
``run_code`` program does the work; when the gate or the sandbox keeps it off,
the native script calls the tools one by one — and the demo says why.
"""

from __future__ import annotations

import importlib.resources
from collections.abc import Callable
from pathlib import Path

import orjson

from hookspecs.reference import ReferenceHost, ScriptedModel, Session
from hookspecs.reference.demo_tools import demo_tool_definitions
from ptc_plus.config import Disclosure
from ptc_plus.demo.workspace import seed_workspace
from ptc_plus.i18n import message
from ptc_plus.plugin import controller

Printer = Callable[[str], None]

DEMO_USER = "demo-user"


def _script(name: str) -> ScriptedModel:
    path = Path(str(importlib.resources.files("ptc_plus.demo").joinpath(name)))
    return ScriptedModel.from_jsonl(path)


def _short(value: object, limit: int = 160) -> str:
    text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _print_calls(session: Session, since: int, out: Printer) -> None:
    for event in session.log.events[since:]:
        data = event.data
        indent = "    " if data.get("parent_call_id") else "  "
        if event.type == "tool-started":
            out(f"{indent}→ {data['call_id']} {data['tool']}({_short(data['arguments'])})")
        elif event.type == "tool-settled":
            result = data["result"]
            shown = result["value"] if result["status"] == "ok" else result["error"]
            out(f"{indent}← {data['call_id']} {result['status']}: {_short(shown)}")


def _print_environment(session: Session, out: Printer) -> bool:
    """Print what the plugin decided for the session; returns whether code mode is on."""
    state = controller(session.host.services).session(session.agent)
    environment = state.environment if state is not None else None
    if environment is None:
        out(message("demo.no-environment"))
        return False
    counts = {d: len(environment.with_disclosure(d)) for d in Disclosure}
    out(
        message(
            "demo.environment",
            ptc=message("demo.on") if environment.ptc else message("demo.off", reason=environment.native_reason),
            full=counts[Disclosure.FULL],
            on_demand=counts[Disclosure.ON_DEMAND],
            off=counts[Disclosure.OFF],
            used=environment.plan.used_tokens,
            budget=environment.plan.budget_tokens,
            unit=environment.token_unit,
            management=message("demo.on") if environment.plan.management else message("demo.management-off"),
        )
    )
    if environment.native_reason == "sandbox-unavailable":
        out(message("demo.sandbox-hint"))
    return environment.ptc


def loaded_plugins(host: ReferenceHost) -> list[str]:
    """Names of the plugins the host actually loaded (a blocked name is registered as ``None``: left out)."""
    return sorted(name for name, plugin in host.facade.pm.list_name_plugin() if plugin is not None)


async def run_demo(workspace: Path, out: Printer = print) -> int:
    """Run the scripted session in ``workspace`` and print what happened; returns the exit code."""
    workspace.mkdir(parents=True, exist_ok=True)
    seed_workspace(workspace)
    out(message("demo.workspace", path=str(workspace)))
    async with ReferenceHost(workspace=workspace, tools=demo_tool_definitions(workspace), user_id=DEMO_USER) as host:
        out(message("demo.plugins", names=", ".join(loaded_plugins(host))))
        session = await host.start_session(title="demo", model=_script("ptc.jsonl"))
        if not _print_environment(session, out):
            session.model = _script("native.jsonl")
        out(message("demo.prompt-sections"))
        for section in session.prompt_sections():
            out(f"  [{section.order:>3} {section.name}] {_short(section.text, 110)}")
        out(message("demo.model-tools", names=", ".join(s.name for s in session.model_tools())))
        question = message("demo.question")
        out(message("demo.user", text=question))
        before = len(session.log.events)
        summary = await session.run_turn(question)
        for entry in session.surface.entries:
            if entry.provenance is not None:
                first = entry.message["content"].splitlines()[0]
                out(message("demo.context-message", provenance=entry.provenance, first=_short(first, 100)))
        _print_calls(session, before, out)
        out(message("demo.assistant", text=summary.final_text, steps=summary.steps, calls=summary.tool_calls))
        for line in ("/capabilities", "/tools", "/compact"):
            receipt = session.command(line)
            if line == "/capabilities":  # the plan with every reason: worth reading whole
                out(f"{line} [{receipt.status.value}]")
                for text in receipt.text.splitlines():
                    out("  " + text.strip())
                continue
            out(f"{line} [{receipt.status.value}] " + _short(receipt.text.replace("\n", "; "), 200))
        session_id = session.agent.session_id
        assert session.model is not None
        requests = len(getattr(session.model, "requests", ()))
    async with ReferenceHost(workspace=workspace, tools=demo_tool_definitions(workspace), user_id=DEMO_USER) as host:
        resumed = await host.resume_session(session_id)
        out(message("demo.resumed", events=len(resumed.log.events), visible=len(resumed.surface.entries)))
    out(message("demo.model-requests", count=requests))
    return 0
