"""``ptc-plus sessions``: the reference-host sessions of a workspace, newest first (``chat --resume`` takes an id).

Logs are read without a lock or a repair (:func:`read_events`): a session open
in another ``chat`` is listed as far as it was written; a log that cannot be
read is listed with its problem instead of stopping the listing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from hookspecs.reference import HostError, read_events
from ptc_plus.cli.chat_view import report_config_issues
from ptc_plus.cli.invocation import ptc_command
from ptc_plus.cli.options import json_option, workspace_option
from ptc_plus.cli.output import JSON_VERSION, emit_json, table
from ptc_plus.i18n import message

HOST_STATE = ".agent-host"
"""The reference host's default state directory in a workspace (what ``chat`` uses)."""


def command() -> click.Command:
    @ptc_command("sessions", help=message("cli.sessions.help"), epilog=message("cli.sessions.examples"))
    @workspace_option()
    @json_option("cli.sessions.json")
    def sessions(workspace: Path, as_json: bool) -> int:
        report_config_issues(workspace)  # what the sessions listed here (and the next one) run with
        listed = list_sessions(workspace / HOST_STATE / "sessions")
        if as_json:
            emit_json({"version": JSON_VERSION, "sessions": listed})
        elif not listed:
            click.echo(message("cli.sessions.none", workspace=str(workspace)))
        else:
            rows = [
                [s["id"], s["title"], s["model"], str(s["turns"]), s["last_user_message"] or s["problem"]]
                for s in listed
            ]
            click.echo(table(message("cli.sessions.headers").split("|"), rows))
        return 0

    return sessions


def list_sessions(directory: Path) -> list[dict[str, Any]]:
    """``{"id", "title", "model", "turns", "last_user_message", "problem", "modified"}`` per root session log."""
    found: list[tuple[float, dict[str, Any]]] = []
    paths = sorted(directory.glob("*.jsonl")) if directory.is_dir() else []
    for path in paths:
        entry: dict[str, Any] = {"id": path.stem, "title": "", "model": "", "turns": 0, "last_user_message": ""}
        entry["problem"] = ""
        try:
            events = read_events(path)
            modified = path.stat().st_mtime
        except (HostError, OSError) as error:
            entry["problem"] = str(error)
            found.append((0.0, entry))
            continue
        if not events or events[0].type != "session-started":
            continue
        info = events[0].data.get("info", {})
        if info.get("agent", {}).get("parent_session_id"):
            continue  # a child agent: resumed with its root, never on its own
        entry["title"] = str(info.get("title", ""))
        entry["model"] = str(info.get("model_route", ""))
        users = [e for e in events if e.type == "user-message"]
        entry["turns"] = len(users)
        if users:
            text = " ".join(str(users[-1].data.get("text", "")).split())
            entry["last_user_message"] = text if len(text) <= 60 else text[:59] + "…"
        found.append((modified, entry))
    found.sort(key=lambda item: item[0], reverse=True)
    return [entry | {"modified": stamp} for stamp, entry in found]
