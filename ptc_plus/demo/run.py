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

from hookspecs import CommandReceipt, ReceiptStatus
from hookspecs.reference import ModelRequest, ReferenceHost, Session
from hookspecs.reference.demo_tools import demo_tool_definitions
from ptc_plus.config import Disclosure
from ptc_plus.demo.change import ConfigChange, Edit, change_config, restore_config
from ptc_plus.demo.learning import statistics_line
from ptc_plus.demo.scripted_model import DemoModel
from ptc_plus.demo.workspace import demo_workspace
from ptc_plus.i18n import message
from ptc_plus.plan import reason_text
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
        requests = await _session(root, out, keep=not temporary)
        out(message("demo.model-requests", count=requests))
    if temporary:
        out(message("demo.workspace-removed", path=str(root)))
    return 0


async def _session(workspace: Path, out: Printer, *, keep: bool) -> int:
    """The demo session, a config change and its refresh, then the resume; returns the scripted model's requests.

    A workspace the user keeps gets its config back as it was, however the run ends (:mod:`.change`).
    """
    change = ConfigChange()
    try:
        async with ReferenceHost(
            workspace=workspace, tools=demo_tool_definitions(workspace), user_id=DEMO_USER
        ) as host:
            out(message("demo.plugins", names=", ".join(loaded_plugins(host))))
            model = DemoModel.named("ptc.jsonl")
            session = await host.start_session(title="demo", model=model)
            code_mode = _print_environment(session, out)
            if not code_mode:
                model = DemoModel.named("native.jsonl")
                session.model = model
            out(message("demo.prompt-sections"))
            for section in session.prompt_sections():
                out(f"  [{section.order:>3} {section.name}] {_short(section.text, 110)}")
            out(message("demo.model-tools", names=", ".join(s.name for s in session.model_tools())))
            await _turn(session, model, message("demo.question"), out)
            for line in ("/capabilities", "/tools"):
                _print_receipt(line, session.command(line), out, whole=line == "/capabilities")
            change = _change_and_refresh(session, workspace, code_mode, out)
            await _turn(session, model, message("demo.question.units"), out)
            _print_receipt("/compact", session.command("/compact"), out)
            session_id = session.agent.session_id
        async with ReferenceHost(
            workspace=workspace, tools=demo_tool_definitions(workspace), user_id=DEMO_USER
        ) as host:
            resumed = await host.resume_session(session_id)
            out(message("demo.resumed", events=len(resumed.log.events), visible=len(resumed.surface.entries)))
    finally:
        undone = restore_config(workspace, change) if keep else ()
    if undone:
        out(message("demo.change.restored", commands="; ".join(edit.undo for edit in undone)))
    return len(model.requests)


def _change_and_refresh(session: Session, workspace: Path, code_mode: bool, out: Printer) -> ConfigChange:
    """Edit the config as the user would, then ``/capabilities refresh``; returns the edit (to undo it later)."""
    change = change_config(workspace)
    _print_edits(change.edits, out)
    refreshed = session.command("/capabilities refresh")
    _print_receipt("/capabilities refresh", refreshed, out, whole=True)
    if refreshed.status is ReceiptStatus.APPLIED:
        _print_refreshed(session, out)
    # The receipt speaks of the plan; natively the model sees none: name what it does see.
    names = ", ".join(s.name for s in session.model_tools())
    state = controller(session.host.services).session(session.agent)
    if state is None or state.environment is None:
        out(message("demo.refresh.no-plan", names=names))
    elif not code_mode:
        out(message("demo.refresh.native", names=names))
    return change


async def _turn(session: Session, model: DemoModel, question: str, out: Printer) -> None:
    """One user turn: the context messages its model steps received first, the calls, the answer."""
    out(message("demo.user", text=question))
    before = len(session.log.events)
    first_step = len(model.requests)
    summary = await session.run_turn(question)
    delivered = [(str(e.data["provenance"]), str(e.data["text"])) for e in session.log.of_type("context-message")]
    seen = _system_texts(model.requests[first_step - 1]) if first_step else set()
    for step in model.requests[first_step:]:
        for index, (provenance, text) in enumerate(delivered):
            if text in _system_texts(step) - seen:
                earlier = [t for p, t in delivered[:index] if p == provenance]
                _print_context_message(provenance, text, earlier[-1] if earlier else None, out)
        seen |= _system_texts(step)
    _print_calls(session, before, out)
    out(message("demo.assistant", text=summary.final_text, steps=summary.steps, calls=summary.tool_calls))


def _system_texts(request: ModelRequest) -> set[str]:
    return {str(m.get("content")) for m in request.messages if m.get("role") == "system"}


def _print_context_message(provenance: str, text: str, replaced: str | None, out: Printer) -> None:
    """A context message by its first line; one that replaces ``replaced`` (a refresh notice replacing the
    catalog) by the lines it opens with before the replaced text's first line: what it says changed."""
    lines = text.splitlines()
    out(message("demo.context-message", provenance=provenance, first=_short(lines[0], 100)))
    anchor = replaced.splitlines()[0] if replaced else None
    if anchor is None or anchor not in lines[1:]:
        return
    head = lines[: lines.index(anchor, 1)]
    for line in head[1:]:
        if line.strip():
            out("    " + line)
    out("    " + message("demo.context-message-more", lines=len(lines) - len(head)))


def _print_refreshed(session: Session, out: Printer) -> None:
    """Each member the last refresh moved, with the reason the refreshed plan gives."""
    state = controller(session.host.services).session(session.agent)
    if state is None or state.environment is None or state.environment.refresh is None:
        return
    diff = state.environment.refresh.diff
    moved = {change.identity for group in (diff.added, diff.removed, diff.changed) for change in group}
    out(message("demo.refresh.why"))
    for entry in state.environment.plan.entries:
        if entry.identity in moved:
            shown = entry.disclosure.value if entry.disclosure is not None else message("ptc.report.absent")
            out(
                "  "
                + message("demo.refresh.member", identity=entry.identity, disclosure=shown, reason=reason_text(entry))
            )


def _print_receipt(line: str, receipt: CommandReceipt, out: Printer, *, whole: bool = False) -> None:
    if whole:  # worth reading whole: the plan with every reason, a refresh's receipt
        out(f"{line} [{receipt.status.value}]")
        for text in receipt.text.splitlines():
            out("  " + text.strip())
        return
    out(f"{line} [{receipt.status.value}] " + _short(receipt.text.replace("\n", "; "), 200))


def _print_edits(edits: tuple[Edit, ...], out: Printer) -> None:
    out(message("demo.change.intro"))
    for edit in edits:
        key = "demo.change.changed" if edit.changed else "demo.change.unchanged"
        out(
            "  $ "
            + edit.command
            + "  "
            + message(key, previous=edit.previous or message("cli.capabilities.set.inherited"))
        )
