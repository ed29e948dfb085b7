"""The REPL journal of a host session, kept in the session's own records (ADR 0081).

Each journal record is one ``ptc-repl-journal/v1`` session record: the host persists it with
the session and a resumed session reads it back, so a kernel rebuilt after a host restart
replays exactly what the first process journalled.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from hookspecs import AgentRef, CompactionInfo, HostServices, SessionRecord, ToolContext
from ptc_plus.config import ConfigIssue, LoadedConfig, UserBindings, load_bindings
from ptc_plus.runtime import DirectoryStore, Hidden, Journal, KernelCell, SessionDirInWorkspace, encode_journal_record

KIND = "ptc-repl-journal/v1"


class SessionRecordsJournal:
    """A :class:`~ptc_plus.runtime.kernel.JournalStore` over one agent's session records."""

    def __init__(self, services: HostServices, agent: AgentRef) -> None:
        self._services = services
        self._agent = agent

    def read(self) -> list[Any]:
        return [dict(record.payload) for record in self._services.read_records(self._agent, KIND)]

    def append(self, record: Mapping[str, Any]) -> None:
        self._services.append_record(self._agent, SessionRecord(kind=KIND, payload=dict(record)))

    def marker(self) -> object:
        # Records are only ever appended: their count changes with every change.
        return len(self._services.read_records(self._agent, KIND))


class KernelSession:
    """A REPL kernel session whose journal lives in a directory (``ptc-plus exec --session DIR``).

    The directory is the session: its journal, and the lock that makes two invocations on it
    run one after the other (:meth:`exclusive`). The kernel's key is the directory's real path.
    It is never inside the workspace: a program could rewrite the journal there, and a replay
    trusts what the journal says a cell's source and tool results were (ADR 0085).
    """

    def __init__(self, store: DirectoryStore, bindings: UserBindings) -> None:
        self._store = store
        self._bindings = bindings
        self.key = str(store.path)

    @classmethod
    def open(cls, directory: Path, loaded: LoadedConfig, workspace: Path) -> KernelSession:
        """The session in ``directory`` (created if missing), with the user bindings ``loaded`` names, for
        cells in ``workspace``.

        The directory's parents are resolved once here, so the store never walks a path through a link a
        program could retarget; its last component stays as given (a symbolic link there is refused).

        :raises SessionDirInWorkspace: ``directory`` is, or resolves to, a place inside ``workspace``.
        :raises SessionDirRefused: ``directory`` is a symbolic link or not a directory.
        """
        root = Path(workspace).resolve()
        absolute = Path(directory).absolute()
        placed = absolute.parent.resolve() / absolute.name
        for candidate in (placed, placed.resolve()):
            if candidate == root or candidate.is_relative_to(root):
                raise SessionDirInWorkspace(path=directory, workspace=root)
        return cls(DirectoryStore(placed), load_bindings(loaded))

    @property
    def issues(self) -> tuple[ConfigIssue, ...]:
        """The configured bindings that do not load (the others still do)."""
        return self._bindings.issues

    def exclusive(self, timeout: float = 30.0) -> AbstractContextManager[None]:
        """Hold the session for one invocation; :class:`SessionBusy` after ``timeout`` seconds."""
        return self._store.exclusive(timeout)

    def cell(self, context: ToolContext) -> KernelCell:
        """The kernel cell ``context``'s ``run_code`` call runs as."""
        return KernelCell(
            session=self.key,
            store=self._store,
            call_id=context.call.call_id,
            bindings=self._bindings.modules,
            bindings_fingerprint=self._bindings.fingerprint,
        )


def session_cell(
    services: HostServices, context: ToolContext, bindings: UserBindings, turned_off: Mapping[str, int] | None = None
) -> KernelCell:
    """The kernel cell of a host session's ``run_code`` call: its journal is the session's own records.
    ``turned_off``: the session's tools a refresh turned off -> that refresh's number."""
    agent = context.call.caller
    return KernelCell(
        session=agent.session_id,
        store=SessionRecordsJournal(services, agent),
        call_id=context.call.call_id,
        bindings=bindings.modules,
        bindings_fingerprint=bindings.fingerprint,
        turned_off=tuple(sorted((turned_off or {}).items())),
    )


def hide_compacted_cells(services: HostServices, compaction: CompactionInfo) -> None:
    """Journal which kernel cells a compaction took off the model-visible surface (provenance).

    A cell stays visible only while its ``run_code`` call is among ``kept_call_ids``; the names it
    declared, and what depends on them, are dropped before the next cell.
    """
    store = SessionRecordsJournal(services, compaction.agent)
    items = store.read()
    if not items:
        return
    journal = Journal.load(items)
    kept = set(compaction.kept_call_ids)
    gone = sorted({c.entered.call_id for c in journal.cells.values() if not c.hidden and c.entered.call_id not in kept})
    if gone:
        store.append(encode_journal_record(Hidden(call_ids=tuple(gone))))
