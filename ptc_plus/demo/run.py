"""Run the demo: a complete scripted session on the reference host, printed step by step.

No model is called: the demo says so first. The model's script depends on
what the session got: with code mode on, one ``run_code`` program does the
work; when the gate or the sandbox keeps it off, the native script calls the
tools one by one — and the demo says why, in words. What the scripted model
says is written from the tool results (:mod:`ptc_plus.demo.scripted_model`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import orjson

from hookspecs import CommandReceipt, ReceiptStatus
from hookspecs.reference import ReferenceHost, Session
from hookspecs.reference.demo_tools import demo_tool_definitions
from ptc_plus.config import Disclosure
from ptc_plus.demo.change import ConfigChange, Edit, change_config, restore_config
from ptc_plus.demo.learning import statistics_line
from ptc_plus.demo.native_twin import CODE, Bill, run_native_twin
from ptc_plus.demo.scripted_model import DemoModel
from ptc_plus.demo.view import Printer, View
from ptc_plus.demo.workspace import demo_workspace
from ptc_plus.doors import embedded
from ptc_plus.i18n import message
from ptc_plus.plan import reason_text
from ptc_plus.plugin import controller

DEMO_USER = "demo-user"


def _short(value: object, limit: int = 160) -> str:
    text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _print_event(event_type: str, data: dict[str, object], started: dict[str, str], view: View) -> None:
    """One call of the turn: a program whole, a host tool call on one line, a result cut to the width."""
    nested = bool(data.get("parent_call_id"))
    indent = "    " if nested else "  "
    ident = f"{data['call_id']} " if view.verbose else ""
    if event_type == "tool-started":
        started[str(data["call_id"])] = str(data["tool"])
        arguments = data["arguments"]
        code = arguments.get("code") if isinstance(arguments, dict) and data["tool"] == "run_code" else None
        if isinstance(code, str):
            view.line(f"{indent}→ {ident}" + message("demo.program", lines=len(code.splitlines())))
            view.program(code)
            return
        view.out(view.clip(f"{indent}→ {ident}{data['tool']}({_short(arguments, sys.maxsize)})"))
    else:
        result = data["result"]
        assert isinstance(result, dict)
        value = result.get("value")
        if started.get(str(data["call_id"])) == "run_code" and result["status"] == "ok" and isinstance(value, dict):
            # A program's result: what it printed, line by line, then what it returned.
            view.line(f"{indent}← {ident}" + message("demo.program-result", calls=value.get("calls", 0)))
            for log in value.get("logs") or ():
                for printed in str(log.get("text", "")).splitlines() if isinstance(log, dict) else ():
                    view.line(f"{indent}  " + message("demo.program-printed", text=printed))
            view.out(
                view.clip(
                    f"{indent}  " + message("demo.program-returned", value=_short(value.get("value"), sys.maxsize))
                )
            )
            return
        shown = value if result["status"] == "ok" else result["error"]
        view.out(view.clip(f"{indent}← {ident}{result['status']}: {_short(shown, sys.maxsize)}"))


def _print_environment(session: Session, view: View) -> bool:
    """Say what the plugin decided for the session, in words (the plan's terms with ``--verbose``); returns
    whether code mode is on."""
    state = controller(session.host.services).session(session.agent)
    environment = state.environment if state is not None else None
    if environment is None:
        view.line(message("demo.no-environment"))
        return False
    counts = {d: len(environment.with_disclosure(d)) for d in Disclosure}
    if environment.ptc:
        view.line(
            message(
                "demo.story.code-mode",
                tools=sum(counts.values()),
                full=counts[Disclosure.FULL],
                on_demand=counts[Disclosure.ON_DEMAND],
                off=counts[Disclosure.OFF],
            )
        )
    else:
        view.line(message("demo.story.native", reason=native_reason_words(environment.native_reason)))
    view.detail(
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
        view.line(message("demo.sandbox-hint"))
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


async def run_demo(
    workspace: Path | None = None, out: Printer = print, *, view: View | None = None, bill: Bill | None = None
) -> int:
    """Run the scripted session and print what happened; returns the exit code.

    With ``workspace`` None the demo runs in a temporary directory it removes
    however it ends; a given directory must be empty or a previous demo's
    (else :class:`~ptc_plus.demo.errors.DemoWorkspaceInUse` or
    :class:`~ptc_plus.demo.errors.DemoWorkspaceNotADirectory`, before anything is written).
    ``view`` says how wide and how detailed the lines are (default: ``out``, unwrapped, the plain story);
    with a ``bill`` the native twin answers the same questions and the bill's closing line compares them.
    """
    view = view or View(out=out, width=sys.maxsize)
    with demo_workspace(workspace) as (root, temporary):
        view.line(message("demo.scripted"))
        view.line(message("demo.workspace-temporary" if temporary else "demo.workspace", path=str(root)))
        # A kept workspace is where the plan learns (run the demo there again): say what it has learnt so far.
        (view.detail if temporary else view.line)(statistics_line(root, temporary))
        requests, code_mode = await _session(root, view, bill, keep=not temporary)
        view.line(message("demo.model-requests", count=requests))
    if bill is not None and code_mode:
        await run_native_twin(bill, DEMO_USER)
        closing = bill.closing_line()
        if closing:
            view.line(closing)
    if temporary:
        view.line(message("demo.workspace-removed", path=str(root)))
    return 0


async def _session(workspace: Path, view: View, bill: Bill | None, *, keep: bool) -> tuple[int, bool]:
    """The demo session, a config change and its refresh, then the resume; returns the scripted model's requests
    and whether code mode was on.

    A workspace the user keeps gets its config back as it was, however the run ends (:mod:`.change`).
    """
    change = ConfigChange()
    try:
        async with embedded(workspace, tools=demo_tool_definitions(workspace), user=DEMO_USER) as host:
            view.detail(message("demo.plugins", names=", ".join(loaded_plugins(host))))
            model = DemoModel.named("ptc.jsonl")
            session = await host.start_session(title="demo", model=model)
            code_mode = _print_environment(session, view)
            if not code_mode:
                model = DemoModel.named("native.jsonl")
                session.model = model
            elif bill is not None:
                session.model = bill.record(model, CODE)
            view.detail(message("demo.prompt-sections"))
            for section in session.prompt_sections():
                view.detail(view.clip(f"  [{section.order:>3} {section.name}] {_short(section.text, sys.maxsize)}"))
            view.detail(message("demo.model-tools", names=", ".join(s.name for s in session.model_tools())))
            await _turn(session, message("demo.question"), view)
            # With code mode off the receipt says why, with the problem's code: worth showing to everyone.
            if view.verbose or not code_mode:
                _print_receipt("/capabilities", session.command("/capabilities"), view, whole=True)
            if view.verbose:
                _print_receipt("/tools", session.command("/tools"), view)
            change = _change_and_refresh(session, workspace, code_mode, view)
            await _turn(session, message("demo.question.units"), view)
            _print_receipt("/compact", session.command("/compact"), view)
            session_id = session.agent.session_id
        async with embedded(workspace, tools=demo_tool_definitions(workspace), user=DEMO_USER) as host:
            resumed = await host.resume_session(session_id)
            view.line(message("demo.resumed", events=len(resumed.log.events), visible=len(resumed.surface.entries)))
    finally:
        undone = restore_config(workspace, change) if keep else ()
    if undone:
        view.line(message("demo.change.restored", commands="; ".join(edit.undo for edit in undone)))
    return len(model.requests), code_mode


def _change_and_refresh(session: Session, workspace: Path, code_mode: bool, view: View) -> ConfigChange:
    """Edit the config as the user would, then ``/capabilities refresh``; returns the edit (to undo it later)."""
    change = change_config(workspace)
    _print_edits(change.edits, view)
    refreshed = session.command("/capabilities refresh")
    _print_receipt("/capabilities refresh", refreshed, view, whole=True)
    if refreshed.status is ReceiptStatus.APPLIED:
        _print_refreshed(session, view)
    # The receipt speaks of the plan; natively the model sees none: name what it does see.
    names = ", ".join(s.name for s in session.model_tools())
    state = controller(session.host.services).session(session.agent)
    if state is None or state.environment is None:
        view.line(message("demo.refresh.no-plan", names=names))
    elif not code_mode:
        view.line(message("demo.refresh.native", names=names))
    return change


async def _turn(session: Session, question: str, view: View) -> None:
    """One user turn, in the order it happened: each context message the host added, each call and its result,
    then the answer. A context message a program's search produced follows the program that caused it."""
    view.line(message("demo.user", text=question))
    before = len(session.log.events)
    summary = await session.run_turn(question)
    delivered: dict[str, list[str]] = {}
    started: dict[str, str] = {}
    for event in session.log.events[:before]:
        if event.type == "context-message":
            delivered.setdefault(str(event.data["provenance"]), []).append(str(event.data["text"]))
    for event in session.log.events[before:]:
        if event.type == "context-message":
            provenance, text = str(event.data["provenance"]), str(event.data["text"])
            earlier = delivered.setdefault(provenance, [])
            _print_context_message(provenance, text, earlier[-1] if earlier else None, view)
            earlier.append(text)
        elif event.type in ("tool-started", "tool-settled"):
            _print_event(event.type, event.data, started, view)
    view.line(message("demo.assistant", text=summary.final_text, steps=summary.steps, calls=summary.tool_calls))


def _print_context_message(provenance: str, text: str, replaced: str | None, view: View) -> None:
    """A context message by its first line; one that replaces ``replaced`` (a refresh notice replacing the
    catalog) by the lines it opens with before the replaced text's first line: what it says changed."""
    lines = text.splitlines()
    head = message("demo.context-message", provenance=provenance, first="")
    view.line(head + _short(lines[0], 160))
    anchor = replaced.splitlines()[0] if replaced else None
    if anchor is None or anchor not in lines[1:]:
        return
    opening = lines[: lines.index(anchor, 1)]
    for line in opening[1:]:
        if line.strip():
            view.line("    " + line)
    view.line("    " + message("demo.context-message-more", lines=len(lines) - len(opening)))


def _print_refreshed(session: Session, view: View) -> None:
    """Each member the last refresh moved, with the reason the refreshed plan gives."""
    state = controller(session.host.services).session(session.agent)
    if state is None or state.environment is None or state.environment.refresh is None:
        return
    diff = state.environment.refresh.diff
    moved = {change.identity for group in (diff.added, diff.removed, diff.changed) for change in group}
    view.line(message("demo.refresh.why"))
    for entry in state.environment.plan.entries:
        if entry.identity in moved:
            shown = entry.disclosure.value if entry.disclosure is not None else message("ptc.report.absent")
            view.line(
                "  "
                + message("demo.refresh.member", identity=entry.identity, disclosure=shown, reason=reason_text(entry))
            )


def _print_receipt(line: str, receipt: CommandReceipt, view: View, *, whole: bool = False) -> None:
    if whole:  # worth reading whole: the plan with every reason, a refresh's receipt
        view.line(f"{line} [{receipt.status.value}]")
        for text in receipt.text.splitlines():
            view.line("  " + text.strip())
        return
    view.out(view.clip(f"{line} [{receipt.status.value}] " + _short(receipt.text.replace("\n", "; "), sys.maxsize)))


def _print_edits(edits: tuple[Edit, ...], view: View) -> None:
    view.line(message("demo.change.intro"))
    for edit in edits:
        key = "demo.change.changed" if edit.changed else "demo.change.unchanged"
        view.line(
            "  $ "
            + edit.command
            + "  "
            + message(key, previous=edit.previous or message("cli.capabilities.set.inherited"))
        )
