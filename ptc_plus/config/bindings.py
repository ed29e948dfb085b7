"""The stateful REPL's user bindings: ``[repl] bindings`` read into module sources (ADR 0082, 0086).

A binding is a Python file whose source the kernel runs, as a module named by
the file's stem, before every cell, in the cell's namespace: it can call the
session's tools and wrap what they return. That is the user's code running with
the model's reach, so only the **user file** may bind (ADR 0086): a workspace
file's entries are a repository's code, which never runs by itself (as its MCP
servers do not, ADR 0071); each is an issue (``binding-workspace``) saying how to
allow it — list the file in the user file, which is the consent — and is never
read. A relative path is relative to the user file's directory, ``~`` is expanded.

A binding file inside the session's workspace (:attr:`.LoadedConfig.workspace`),
where the program may be racing the host, is opened beneath the workspace's
descriptor without following any link (:mod:`hookspecs.workspace_files`): a
symlink swapped in for it is refused (``binding-symlink``), never followed to a
host file. Elsewhere a file is read by its path (the user's own files).

Every unusable entry is a :class:`ConfigIssue` at ``repl.bindings[<index>]`` of
its file (code PTC-4010, reason ``binding-*``), every ``OSError`` included; the
usable ones still load.
"""

from __future__ import annotations

import errno
import hashlib
import keyword
import os
from collections.abc import Sequence
from pathlib import Path

import attrs
import orjson

from hookspecs import workspace_files
from ptc_plus.config.issues import ConfigIssue
from ptc_plus.config.loader import LoadedConfig
from ptc_plus.config.source import NotRegularFile, read_regular_file

MAX_BINDING_BYTES = 256 * 1024
"""The largest binding file read; a helper module past this is a data file in disguise."""
FINGERPRINT_PREFIX = "sha256:"


@attrs.frozen(kw_only=True)
class UserBindings:
    """The bindings a session's kernel loads, in order, and what was refused.

    :ivar modules: ``(module name, source text)`` pairs, user file's first.
    :ivar fingerprint: :func:`bindings_fingerprint` of ``modules``; ``""`` when there are none.
    :ivar issues: one per listed file that does not load (not part of the fingerprint).
    """

    modules: tuple[tuple[str, str], ...] = ()
    fingerprint: str = ""
    issues: tuple[ConfigIssue, ...] = ()


def bindings_fingerprint(modules: Sequence[tuple[str, str]]) -> str:
    """``sha256:<hex>`` over the canonical JSON ``[[name, source], ...]``; ``""`` for no modules.

    Equal lists give equal fingerprints whichever files they came from: the
    journal records what ran, not where it was read.
    """
    if not modules:
        return ""
    canonical = orjson.dumps([[name, source] for name, source in modules])
    return FINGERPRINT_PREFIX + hashlib.sha256(canonical).hexdigest()


def load_bindings(loaded: LoadedConfig) -> UserBindings:
    """Read every file the user file's ``[repl] bindings`` names; never raises for a bad entry.

    A module name already bound by an earlier entry is refused (``binding-duplicate``): the later file
    would silently replace the earlier one's names in the kernel. Entries of the workspace file
    (``loaded.workspace_file``) are refused unread (``binding-workspace``, ADR 0086).

    :raises ValueError: ``loaded.binding_origins`` does not match ``loaded.config.repl.bindings`` (a
        :class:`LoadedConfig` built by hand rather than by :func:`.load_config` / :func:`.combine`).
    """
    workspace = _workspace_root(loaded)
    modules: list[tuple[str, str]] = []
    sources: dict[str, str] = {}
    issues: list[ConfigIssue] = []
    for written, (file, index) in zip(loaded.config.repl.bindings, loaded.binding_origins, strict=True):
        issue_at = f"repl.bindings[{index}]"
        if file == loaded.workspace_file:
            path = os.path.abspath(os.path.join(os.path.dirname(file), os.path.expanduser(written)))
            params = {"path": path}
            issues.append(ConfigIssue(file=file, path=issue_at, reason="binding-workspace", params=params))
            continue
        found = _load_one(written, file, workspace)
        if isinstance(found, _Refused):
            issues.append(ConfigIssue(file=file, path=issue_at, reason=found.reason, params=found.params))
            continue
        name, source, path = found
        if name in sources:
            params = {"name": name, "path": path, "other": sources[name]}
            issues.append(ConfigIssue(file=file, path=issue_at, reason="binding-duplicate", params=params))
            continue
        sources[name] = path
        modules.append((name, source))
    return UserBindings(modules=tuple(modules), fingerprint=bindings_fingerprint(modules), issues=tuple(issues))


@attrs.frozen
class _Refused:
    reason: str
    params: dict[str, str]


def _workspace_root(loaded: LoadedConfig) -> str | None:
    """The session's workspace, absolute (``None``: the config was loaded for no workspace)."""
    if loaded.workspace is not None:
        return os.path.abspath(loaded.workspace)
    if loaded.workspace_file is not None:  # a LoadedConfig from :func:`.combine` alone
        return os.path.dirname(os.path.dirname(os.path.abspath(loaded.workspace_file)))
    return None


def _beneath(path: str, workspace: str) -> str | None:
    """``path`` relative to the real ``workspace`` when it lies inside it, else ``None``.

    Checked lexically against the given and the real workspace path first; else the shortest leading part of
    ``path`` whose real path is inside the workspace (a link outside it, which the program cannot change, into
    it) decides, and the parts after it stay as written, to be opened without links.
    """
    real_root = os.path.realpath(workspace)
    for root in (workspace, real_root):
        if os.path.commonpath([path, root]) == root:
            return os.path.relpath(path, root)
    parts = path.split(os.sep)
    for end in range(2, len(parts) + 1):
        real = os.path.realpath(os.sep.join(parts[:end]))
        if os.path.commonpath([real, real_root]) == real_root:
            return os.path.join(os.path.relpath(real, real_root), *parts[end:])
    return None


def _load_one(written: str, file: str, workspace: str | None) -> tuple[str, str, str] | _Refused:
    """``(module name, source, shown path)`` of one user-file entry, or why it does not load."""
    shown = written
    try:
        path = os.path.abspath(os.path.join(os.path.dirname(file), os.path.expanduser(written)))
        shown = path
        name, suffix = os.path.splitext(os.path.basename(path))
        if suffix != ".py" or not name.isidentifier() or keyword.iskeyword(name):
            return _Refused("binding-name", {"path": shown})
        inside = _beneath(path, workspace) if workspace is not None else None
        if inside is not None:
            assert workspace is not None
            with workspace_files.workspace_root(os.path.realpath(workspace)) as root:
                raw = workspace_files.read_bytes(root, inside, max_bytes=MAX_BINDING_BYTES + 1)
        else:
            raw = read_regular_file(Path(os.path.realpath(path)), MAX_BINDING_BYTES)
    except (FileNotFoundError, workspace_files.PathNotFound):
        return _Refused("binding-missing", {"path": shown})
    except workspace_files.SymlinkRefused:
        return _Refused("binding-symlink", {"path": shown, "workspace": workspace or ""})
    except (NotRegularFile, workspace_files.NotARegularFile, workspace_files.NotADirectory, IsADirectoryError):
        return _Refused("binding-not-a-file", {"path": shown})
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM):
            return _Refused("binding-permission", {"path": shown})
        return _Refused("binding-unreadable", {"path": shown, "detail": exc.strerror or str(exc)})
    except (workspace_files.WorkspacePathError, ValueError) as exc:  # a NUL byte, a name the system refuses
        return _Refused("binding-unreadable", {"path": shown, "detail": str(exc)})
    if len(raw) > MAX_BINDING_BYTES:
        return _Refused("binding-too-large", {"path": shown, "limit": str(MAX_BINDING_BYTES)})
    try:
        source = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _Refused("binding-not-utf8", {"path": shown, "byte": f"0x{raw[exc.start]:02x}"})
    return name, source, shown
