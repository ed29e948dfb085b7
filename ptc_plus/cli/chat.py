"""``ptc-plus chat``: the reference host as an interactive agent with a real model (SPEC §9, ADR 0075).

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
import getpass
import os
import sys
from pathlib import Path

import click

from hookspecs.reference import Approver, OpenAIChatModel, ReferenceHost, Session
from ptc_plus.cli.chat_approval import approver, marked_tools, terminal_ask
from ptc_plus.cli.chat_errors import ChatTurnFailed, MissingKey, MissingModel, UnknownSession
from ptc_plus.cli.chat_loop import CANCELLED, FAILED, interactive, prompt_reader, record_usage, run_turn
from ptc_plus.cli.chat_view import CallObserver, ChatView, report_config_issues
from ptc_plus.cli.invocation import ptc_command
from ptc_plus.cli.options import read_tool_set, tools_option, workspace_option
from ptc_plus.i18n import message

DEFAULT_KEY_VARIABLE = "OPENAI_API_KEY"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_RETRIES = 3
EXIT_INTERRUPTED = 130
HISTORY_FILE = "chat-history"


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
        interactive_terminal = prompt is None and sys.stdin.isatty()
        guard = approver(marked_tools(approve), terminal_ask if interactive_terminal else None)
        return asyncio.run(_chat(route, workspace, tools, resume, prompt, verbose, guard))

    return chat


def _model(
    name: str | None, base_url: str | None, key_variable: str | None, *, stream: bool, retries: int
) -> OpenAIChatModel:
    name = name or os.environ.get("OPENAI_MODEL")
    if not name:
        raise MissingModel()
    variable = key_variable or DEFAULT_KEY_VARIABLE
    key = os.environ.get(variable) or None
    if key is None and key_variable is not None:
        raise MissingKey(variable=variable)  # named on purpose: going on without it would only fail later
    url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
    if key is None:
        click.echo(message("cli.chat.no-key", variable=variable), err=True)
    return OpenAIChatModel(base_url=url, model=name, api_key=key, stream=stream, max_retries=retries)


def _user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return ""


async def _chat(
    model: OpenAIChatModel,
    workspace: Path,
    tools: str | None,
    resume: str | None,
    prompt: str | None,
    verbose: bool,
    guard: Approver | None,
) -> int:
    definitions = read_tool_set(tools, workspace).definitions if tools is not None else ()
    report_config_issues(workspace)
    view = ChatView(verbose=verbose, calls_to_stderr=prompt is not None)
    model.on_text = view.text
    try:
        async with ReferenceHost(
            workspace=workspace, tools=definitions, plugins=[CallObserver(view)], user_id=_user(), approver=guard
        ) as host:
            session = await _open(host, model, resume)
            model.on_usage = lambda usage: record_usage(session, usage)
            if prompt is None:
                return await interactive(session, view, prompt_reader(host.state_dir / HISTORY_FILE))
            outcome = await run_turn(session, view, prompt)
            if outcome == CANCELLED:
                click.echo(message("cli.interrupted"), err=True)
                return EXIT_INTERRUPTED
            if outcome == FAILED:
                raise ChatTurnFailed(session=session.agent.session_id)
            click.echo(message("cli.chat.session", session=session.agent.session_id), err=True)
            return 0
    finally:
        await model.aclose()


async def _open(host: ReferenceHost, model: OpenAIChatModel, resume: str | None) -> Session:
    if resume is None:
        return await host.start_session(title="ptc-plus chat", model=model)
    if not host.log_path(resume).is_file() or "/" in resume:
        raise UnknownSession(session=resume, directory=str(host.log_path(resume).parent))
    session = await host.resume_session(resume, model=model)
    for line in session.diagnostics:
        click.echo(line, err=True)
    return session
