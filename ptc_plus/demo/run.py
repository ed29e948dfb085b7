"""Run the demo: a complete scripted session on the reference host, printed step by step.

No model is called: the demo says so first. The model's script depends on
what the session got: with code mode on, one ``run_code`` program does the
work; when the gate or the sandbox keeps it off, the native script calls the
tools one by one — and the demo says why, in words. What the scripted model
says is written from the tool results (:mod:`ptc_plus.demo.scripted_model`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson

from hookspecs.reference import ReferenceHost, Session
from hookspecs.reference.demo_tools import demo_tool_definitions
from ptc_plus.config import Disclosure
from ptc_plus.demo.learning import statistics_line
from ptc_plus.demo.scripted_model import DemoModel
from ptc_plus.demo.workspace import demo_workspace
from ptc_plus.i18n import message
from ptc_plus.plugin import controller

Printer = Callable[[str], None]

DEMO_USER = "demo-user"


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
            ptc=message("demo.on")
            if environment.ptc
            else message("demo.off", reason=native_reason_words(environment.native_reason)),
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


def native_reason_words(token: str, lang: str | None = None) -> str:
    """Why code mode is off, in words: the environment's stable token (``gate:<reason>``,
    ``sandbox-unavailable``, ``presentation``) is for logs, never for the demo's reader."""
    if token.startswith("gate:"):
        gate_reason = token.removeprefix("gate:")
        try:
            why = message(f"gate.reason.{gate_reason}", lang)
        except KeyError:  # a gate reason newer than this demo: still say it is the gate
            why = gate_reason
        return message("demo.native.gate", lang, reason=why)
    if token == "sandbox-unavailable":
        return message("demo.native.sandbox-unavailable", lang)
    if token == "presentation":
        return message("demo.native.presentation", lang)
    return message("demo.native.other", lang)


def loaded_plugins(host: ReferenceHost) -> list[str]:
    """Names of the plugins the host actually loaded (a blocked name is registered as ``None``: left out)."""
    return sorted(name for name, plugin in host.facade.pm.list_name_plugin() if plugin is not None)


async def run_demo(workspace: Path | None = None, out: Printer = print) -> int:
    """Run the scripted session and print what happened; returns the exit code.

    With ``workspace`` None the demo runs in a temporary directory it removes
    however it ends; a given directory must be empty or a previous demo's
    (else :class:`~ptc_plus.demo.errors.DemoWorkspaceInUse` or
    :class:`~ptc_plus.demo.errors.DemoWorkspaceNotADirectory`, before anything is written).
    """
    with demo_workspace(workspace) as (root, temporary):
        out(message("demo.scripted"))
        out(message("demo.workspace-temporary" if temporary else "demo.workspace", path=str(root)))
        out(statistics_line(root, temporary))
        requests = await _session(root, out)
        out(message("demo.model-requests", count=requests))
    if temporary:
        out(message("demo.workspace-removed", path=str(root)))
    return 0


async def _session(workspace: Path, out: Printer) -> int:
    """The demo session, then its resume; returns how many requests the scripted model got."""
    async with ReferenceHost(workspace=workspace, tools=demo_tool_definitions(workspace), user_id=DEMO_USER) as host:
        out(message("demo.plugins", names=", ".join(loaded_plugins(host))))
        model = DemoModel.named("ptc.jsonl")
        session = await host.start_session(title="demo", model=model)
        if not _print_environment(session, out):
            model = DemoModel.named("native.jsonl")
            session.model = model
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
    async with ReferenceHost(workspace=workspace, tools=demo_tool_definitions(workspace), user_id=DEMO_USER) as host:
        resumed = await host.resume_session(session_id)
        out(message("demo.resumed", events=len(resumed.log.events), visible=len(resumed.surface.entries)))
    return len(model.requests)
