"""``ptc-plus chat``: the reference host as an interactive agent with a real model (ADR 0075).

Any OpenAI-compatible endpoint (``--base-url``, ``--model``) answers; the key
is read from the environment variable ``--api-key-env`` names (default
``OPENAI_API_KEY``) and handed to the model client only: never printed, logged
or recorded. The PTC Plus plugin loads as in any host session, so the model
gets ``run_code`` and the workspace's plan. Sessions persist under the
workspace's host state (``ptc-plus sessions`` lists them; ``--resume`` goes on
with one). ``-p PROMPT`` runs one turn and exits: the answer on standard
output, the calls on standard error.

Exit code: 0 the session ended (or the one turn answered), 1 the model
endpoint failed in one-shot mode, 2 usage error, 130 interrupted.
"""

from __future__ import annotations

import asyncio
import os
import sys
import urllib.parse
from pathlib import Path

import click

from hookspecs.reference import Approver, ChildProvider, OpenAIChatModel, ReferenceHost, Session
from ptc_plus.cli.chat_approval import approver, marked_tools, terminal_ask
from ptc_plus.cli.chat_errors import BadBaseUrl, ChatTurnFailed, MissingKey, MissingModel, UnknownSession
from ptc_plus.cli.chat_loop import CANCELLED, FAILED, interactive, prompt_reader, record_usage, run_turn
from ptc_plus.cli.chat_view import CallObserver, ChatView, report_config_issues
from ptc_plus.cli.invocation import ptc_command
from ptc_plus.cli.options import read_tool_set, tools_option, workspace_option
from ptc_plus.cli.wrap import echo
from ptc_plus.doors import embedded, login_name
from ptc_plus.i18n import message
from ptc_plus.plugin import desk, held
from ptc_plus.workflow import ProgressEvent

DEFAULT_KEY_VARIABLE = "OPENAI_API_KEY"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_RETRIES = 3
EXIT_INTERRUPTED = 130
HISTORY_FILE = "chat-history"
RESUMED_TURNS = 3
"""User turns (with their answers) shown when a session is resumed: where the conversation stood."""
SHOWN_CHARACTERS = 300
"""Characters of one resumed message shown (the rest is cut and marked)."""


def command() -> click.Command:
    @ptc_command("chat", help=message("cli.chat.help"), epilog=message("cli.chat.examples"))
    @click.option("-p", "--prompt", default=None, metavar="TEXT", help=message("cli.chat.prompt"))
    @click.option("--model", default=None, metavar="NAME", help=message("cli.chat.model"))
    @click.option("--base-url", default=None, metavar="URL", help=message("cli.chat.base-url"))
    @click.option("--api-key-env", default=None, metavar="NAME", help=message("cli.chat.api-key-env"))
    @click.option("--resume", default=None, metavar="SESSION", help=message("cli.chat.resume"))
    @click.option("--verbose", is_flag=True, help=message("cli.chat.verbose"))
    @click.option("--no-stream", is_flag=True, help=message("cli.chat.no-stream"))
    @click.option("--approve", multiple=True, metavar="TOOLS", help=message("cli.chat.approve"))
    @click.option(
        "--retries",
        type=click.IntRange(0, 10),
        default=DEFAULT_RETRIES,
        show_default=True,
        help=message("cli.chat.retries"),
    )
    @workspace_option()
    @tools_option("cli.chat.tools")
    def chat(
        prompt: str | None,
        model: str | None,
        base_url: str | None,
        api_key_env: str | None,
        resume: str | None,
        verbose: bool,
        no_stream: bool,
        retries: int,
        approve: tuple[str, ...],
        workspace: Path,
        tools: str | None,
    ) -> int:
        route = _model(model, base_url, api_key_env, stream=not no_stream, retries=retries)
        # Child agents (workflows, /ralph) use the same endpoint, unstreamed: their text is not the conversation.
        children = _model(model, base_url, api_key_env, stream=False, retries=retries, quiet=True)
        interactive_terminal = prompt is None and sys.stdin.isatty()
        guard = approver(marked_tools(approve), terminal_ask if interactive_terminal else None)
        return asyncio.run(_chat(route, workspace, tools, resume, prompt, verbose, guard, children))

    return chat


def _model(
    name: str | None,
    base_url: str | None,
    key_variable: str | None,
    *,
    stream: bool,
    retries: int,
    quiet: bool = False,
) -> OpenAIChatModel:
    name = name or os.environ.get("OPENAI_MODEL")
    if not name:
        raise MissingModel()
    variable = key_variable or DEFAULT_KEY_VARIABLE
    key = os.environ.get(variable) or None
    if key is None and key_variable is not None:
        raise MissingKey(variable=variable)  # named on purpose: going on without it would only fail later
    url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        # Without a scheme the SDK sends the requests nowhere useful and the failure names no cause.
        raise BadBaseUrl(url=url, fixed="http://" + url.split("://", 1)[-1])
    if key is None and not quiet:
        echo(message("cli.chat.no-key", variable=variable), err=True)
    return OpenAIChatModel(base_url=url, model=name, api_key=key, stream=stream, max_retries=retries)


async def _chat(
    model: OpenAIChatModel,
    workspace: Path,
    tools: str | None,
    resume: str | None,
    prompt: str | None,
    verbose: bool,
    guard: Approver | None,
    children: OpenAIChatModel | None = None,
) -> int:
    definitions = read_tool_set(tools, workspace).definitions if tools is not None else ()
    report_config_issues(workspace)
    view = ChatView(verbose=verbose, calls_to_stderr=prompt is not None)
    model.on_text = view.text
    unreached: Path | None = None  # a new session's log, when none of its requests reached the model
    try:
        providers = {"": ChildProvider(make=lambda request: children)} if children is not None else None
        async with embedded(
            workspace,
            tools=definitions,
            plugins=[CallObserver(view)],
            user=login_name(),
            approver=guard,
            child_providers=providers,
        ) as host:
            found = desk(host.services)
            if found is not None:  # workflow and Ralph progress, live (ADR 0116)
                found.engine.listeners.append(lambda event: view.line(progress_line(event)))
            session = await _open(host, model, resume, view)
            model.on_usage = lambda usage: record_usage(session, usage)
            try:
                return await _converse(host, session, model, view, prompt, resumed=resume is not None)
            finally:
                if resume is None and not model.reached:
                    unreached = host.log_path(session.agent.session_id)
    finally:
        await model.aclose()
        if children is not None:
            await children.aclose()
        if unreached is not None:
            # Nothing of such a session is worth going on with: it is not left for `sessions` to list.
            unreached.unlink(missing_ok=True)


async def _converse(
    host: ReferenceHost, session: Session, model: OpenAIChatModel, view: ChatView, prompt: str | None, *, resumed: bool
) -> int:
    if prompt is None:
        reader = prompt_reader(host.state_dir / HISTORY_FILE)
        code = await interactive(session, view, reader, lambda tool: _plan_mark(host, session, tool))
        if resumed or model.reached:
            echo(message("cli.chat.session", session=session.agent.session_id), err=True)
        return code
    outcome = await run_turn(session, view, prompt)
    kept = resumed or model.reached
    if outcome == CANCELLED:
        echo(message("cli.interrupted"), err=True)
        return EXIT_INTERRUPTED
    if outcome == FAILED:
        if not kept:
            raise ChatTurnFailed("PTC-7306")  # the model was never reached: no session is kept
        raise ChatTurnFailed(session=session.agent.session_id)
    echo(message("cli.chat.session", session=session.agent.session_id), err=True)
    return 0


def _plan_mark(host: ReferenceHost, session: Session, tool: str) -> str:
    """What ``/tools`` adds to a tool the session's capability plan keeps out (off, or turned off by a refresh)."""
    state = held(host.services)
    found = state.session(session.agent) if state is not None else None
    if found is not None and tool in found.turned_off:
        return message("cli.chat.tool-turned-off", sequence=found.turned_off[tool])
    membership = found.membership if found is not None else None
    if membership is None or membership.reaches(tool) or tool not in membership.known:
        return ""
    return message("cli.chat.tool-off")


async def _open(host: ReferenceHost, model: OpenAIChatModel, resume: str | None, view: ChatView) -> Session:
    if resume is None:
        return await host.start_session(title="ptc-plus chat", model=model)
    if not host.log_path(resume).is_file() or "/" in resume:
        raise UnknownSession(session=resume, directory=str(host.log_path(resume).parent))
    session = await host.resume_session(resume, model=model)
    for line in session.diagnostics:
        echo(line, err=True)
    _show_last_turns(session, view)
    return session


def _show_last_turns(session: Session, view: ChatView) -> None:
    """The last :data:`RESUMED_TURNS` user turns and the answers to them, so the person sees where they were."""
    said = [
        (m["role"], str(m.get("content") or ""))
        for m in session.surface.messages()
        if m.get("role") in ("user", "assistant") and m.get("content")
    ]
    starts = [i for i, (role, _) in enumerate(said) if role == "user"]
    shown = said[starts[-RESUMED_TURNS] :] if len(starts) >= RESUMED_TURNS else said
    if not shown:
        return
    view.note(message("cli.chat.resumed", turns=len([r for r, _ in shown if r == "user"])))
    for role, text in shown:
        text = " ".join(text.split())
        text = text if len(text) <= SHOWN_CHARACTERS else text[: SHOWN_CHARACTERS - 1] + "…"
        view.note(("› " if role == "user" else "  ") + text, prose=role != "user")  # the user's words as typed


def progress_line(event: ProgressEvent) -> str:
    """One line of a workflow's or Ralph's progress for the terminal."""
    outcome = "" if event.ok is None else message("cli.chat.progress.ok" if event.ok else "cli.chat.progress.failed")
    return message(
        f"cli.chat.progress.{event.kind}",
        run=event.run_id,
        label=event.label or event.call_id,
        phase=event.phase,
        outcome=outcome,
        detail=event.detail,
    )
