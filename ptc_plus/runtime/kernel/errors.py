"""Errors the REPL kernel's journal and its store raise on purpose (codes PTC-R010..PTC-R019).

A damaged journal is never an error: its unreadable or invalid entries are skipped and counted
(:class:`~ptc_plus.runtime.kernel.journal.Journal`), so an invalid journal never blocks current work.
These errors are about the store itself: a session directory that cannot be trusted or reached,
and a session another invocation is using.
"""

from __future__ import annotations

from ptc_plus.errors import PtcError


class SessionDirRefused(PtcError):
    """The session directory is a symbolic link or not a directory (param ``path``)."""

    code = "PTC-R010"


class SessionBusy(PtcError):
    """Another invocation holds the session for longer than we were willing to wait (params ``path``,
    ``timeout``)."""

    code = "PTC-R011"


class JournalReadFailed(PtcError):
    """The operating system refused to read the session directory or its journal (params ``path``,
    ``detail``)."""

    code = "PTC-R012"


class JournalWriteFailed(PtcError):
    """The operating system refused to create the session directory or append to its journal (params
    ``path``, ``detail``); the record was not written."""

    code = "PTC-R013"


class SessionFileRefused(PtcError):
    """A file of the session directory is a symbolic link or not a regular file (param ``path``)."""

    code = "PTC-R014"


class SessionDirInWorkspace(PtcError):
    """The session directory is inside the workspace, where a program could rewrite its journal (params
    ``path``, ``workspace``; ADR 0085)."""

    code = "PTC-R015"


class JournalTooLarge(PtcError):
    """The journal is larger than a journal may be read (params ``path``, ``size``, ``limit``): it is damage,
    set aside as ``set_aside`` (ADR 0085)."""

    code = "PTC-R016"
