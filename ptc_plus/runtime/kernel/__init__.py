"""The stateful REPL kernel (ADR 0081): one live worker per session, a journal of its cells, and
recovery by replaying them with their recorded tool results.

The journal (records, encoding and what a loaded journal says) is pure data; the store keeps it on disk.
"""

from __future__ import annotations

from ptc_plus.runtime.kernel.errors import (
    JournalReadFailed,
    JournalTooLarge,
    JournalWriteFailed,
    SessionBusy,
    SessionDirInWorkspace,
    SessionDirRefused,
    SessionFileRefused,
)
from ptc_plus.runtime.kernel.journal import (
    BindingsRecord,
    Cell,
    Deleted,
    Entered,
    HeadMoved,
    Hidden,
    Invalid,
    Journal,
    Reason,
    Record,
    RecordedCall,
    Settled,
    decode,
    encode,
)
from ptc_plus.runtime.kernel.store import DirectoryStore, JournalStore, Unreadable

__all__ = [
    "BindingsRecord",
    "Cell",
    "Deleted",
    "DirectoryStore",
    "Entered",
    "HeadMoved",
    "Hidden",
    "Invalid",
    "Journal",
    "JournalReadFailed",
    "JournalStore",
    "JournalTooLarge",
    "JournalWriteFailed",
    "Reason",
    "Record",
    "RecordedCall",
    "SessionBusy",
    "SessionDirInWorkspace",
    "SessionDirRefused",
    "SessionFileRefused",
    "Settled",
    "Unreadable",
    "decode",
    "encode",
]
