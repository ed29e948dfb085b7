"""The workspace's sessions the page lists, live and recent, each with its frozen plan and pending diff (ADR 0130).

Where they are kept: the reference host's sessions and ``ptc-plus chat``'s (and ``ptc-plus demo``'s) in
the workspace's host state, ``<workspace>/.agent-host/sessions/<id>.jsonl``; the llm plugin's
conversations under llm's user directory, ``<llm user dir>/ptc-plus/sessions/llm-<id>.jsonl``, one
directory for every workspace, so only those whose start names this workspace are listed.

**Live** means a process holds the session's log open right now: the reference host takes an exclusive
``flock`` on the log for as long as a session is open (a ``chat`` in progress, an llm request, a host),
and the kernel drops it when that process ends, however it ends. A session not live is only its log.

Logs are read without a lock and without a repair (:func:`~hookspecs.reference.read_events`), as
``ptc-plus sessions`` reads them: listing never takes a session away from its owner. The frozen plan is
the latest environment record, restored as a resume restores it; the pending diff is the frozen plan
against the plan a new session of the workspace would get now (the page's own plan: the same facts a
refresh from this page plans from, :mod:`.refresh`).
"""

from __future__ import annotations

import enum
import os
from pathlib import Path

import attrs
import click

from hookspecs import SessionRecord
from hookspecs.reference import HostError, open_elsewhere, read_events
from ptc_plus.i18n import message
from ptc_plus.plan import CapabilityPlan
from ptc_plus.session import RestoreStatus, frozen_environment, pending_summary, plan_lines

HOST_STATE = ".agent-host"
"""The reference host's default state directory in a workspace (``chat``, ``demo``, a host without one)."""
LLM_STATE = "ptc-plus"
"""The llm plugin's directory under llm's user directory (``ptc_plus.doors.llm.conversation.STATE``)."""
CHAT_TITLE = "ptc-plus chat"
"""The title ``ptc-plus chat`` gives the sessions it starts."""
RECENT = 20
"""Sessions listed at most, newest first (every live one among them first)."""


class Kind(enum.StrEnum):
    HOST = "host"
    CHAT = "chat"
    LLM = "llm"


@attrs.frozen(kw_only=True)
class SessionRow:
    """One listed session: who keeps it, whether it is live, its frozen plan and what a refresh would change.

    ``plan`` is ``None`` when the session holds no proven environment (``state`` says why: ``missing``,
    a session from before the plugin; ``corrupt`` or ``unsupported``; ``unreadable``, the log itself);
    ``pending`` is the ``/capabilities`` line of what a refresh now would do (``None`` without a plan).
    """

    session_id: str
    kind: Kind
    title: str
    live: bool
    modified: float
    log: Path
    state: str
    detail: str = ""
    plan: CapabilityPlan | None = None
    unit: str = ""
    sequence: int = 0
    pending: str | None = None


def llm_user_dir() -> Path:
    """llm's user directory as ``llm.user_dir()`` finds it, without creating it (listing creates nothing)."""
    given = os.environ.get("LLM_USER_PATH")
    return Path(given) if given else Path(click.get_app_dir("io.datasette.llm"))


def workspace_sessions(workspace: Path, now: CapabilityPlan, lang: str) -> tuple[SessionRow, ...]:
    """The workspace's root sessions, live ones first, then newest first, at most :data:`RECENT`.

    Which logs are live and how new they are is known without reading them; only the logs listed are read
    (a child's log, or an llm conversation of another workspace, is read and passed over).
    """
    root = workspace.resolve()
    logs = [*_logs(root / HOST_STATE / "sessions", None), *_logs(llm_user_dir() / LLM_STATE / "sessions", Kind.LLM)]
    logs.sort(key=lambda log: (not log.live, -log.modified, log.path.name))
    rows: list[SessionRow] = []
    for log in logs:
        if len(rows) == RECENT:
            break
        row = _row(log, root, now, lang)
        if row is not None:
            rows.append(row)
    return tuple(rows)


def find_session(workspace: Path, session_id: str, now: CapabilityPlan, lang: str) -> SessionRow | None:
    """The listed session ``session_id`` of ``workspace`` (``None``: not one of its sessions)."""
    return next((row for row in workspace_sessions(workspace, now, lang) if row.session_id == session_id), None)


@attrs.frozen
class _Log:
    path: Path
    kind: Kind | None
    """``None``: the host's or chat's, told apart by the session's title."""
    modified: float
    live: bool
    problem: str = ""


def _logs(directory: Path, kind: Kind | None) -> list[_Log]:
    if not directory.is_dir():
        return []
    found = []
    for path in sorted(directory.glob("*.jsonl")):
        try:
            found.append(_Log(path, kind, path.stat().st_mtime, open_elsewhere(path)))
        except (HostError, OSError) as error:  # gone since the listing, or not readable
            if kind is not Kind.LLM:  # llm's directory is every workspace's: such a log names none
                problem = error.message() if isinstance(error, HostError) else str(error)
                found.append(_Log(path, kind, 0.0, False, problem))
    return found


def _row(log: _Log, root: Path, now: CapabilityPlan, lang: str) -> SessionRow | None:
    """The session of ``log`` if it is a root session of ``root`` (a child goes with its root)."""
    path, kind = log.path, log.kind
    unreadable = SessionRow(
        session_id=path.stem, kind=Kind.HOST, title="", live=False, modified=0.0, log=path, state="unreadable",
        detail=log.problem,
    )  # fmt: skip
    if log.problem:
        return unreadable
    try:
        events = read_events(path)
    except (HostError, OSError) as error:
        if kind is Kind.LLM:
            return None
        return attrs.evolve(unreadable, detail=error.message(lang) if isinstance(error, HostError) else str(error))
    if not events or events[0].type != "session-started":
        return None
    info = events[0].data.get("info", {})
    if info.get("agent", {}).get("parent_session_id"):
        return None
    if kind is Kind.LLM and Path(str(info.get("workspace", ""))).resolve() != root:
        return None
    title = str(info.get("title", ""))
    records = [
        SessionRecord(kind=str(e.data["kind"]), version=int(e.data["version"]), payload=e.data["payload"])
        for e in events
        if e.type == "record"
    ]
    restored = frozen_environment(records)
    row = SessionRow(
        session_id=path.stem,
        kind=kind or (Kind.CHAT if title == CHAT_TITLE else Kind.HOST),
        title=title,
        live=log.live,
        modified=log.modified,
        log=path,
        state=restored.status.value,
        detail=restored.detail,
    )
    environment = restored.environment
    if restored.status is not RestoreStatus.RESTORED or environment is None:
        return row
    summary = pending_summary(environment.plan, now, lang)
    pending = message("ptc.report.pending-diff", lang, sequence=environment.sequence + 1, summary=summary)
    return attrs.evolve(
        row, plan=environment.plan, unit=environment.token_unit, sequence=environment.sequence, pending=pending
    )


def frozen_lines(row: SessionRow, lang: str) -> list[str]:
    """The frozen plan as ``/capabilities`` words it: its summary lines, then one line per capability."""
    if row.plan is None:
        return []
    return plan_lines(row.plan, row.unit, lang)
