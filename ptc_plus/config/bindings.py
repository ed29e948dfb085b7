"""The stateful REPL's user bindings: ``[repl] bindings`` read into module sources (SPEC §8, ADR 0082).

A binding is a Python file whose source the kernel runs, as a module named by
the file's stem, before every cell. It is sent to the worker as text and runs
inside the program's sandbox, so it can do nothing a program could not: the
rules here only decide which files a config file may name. The user file's
list comes first, then the workspace file's (:attr:`.LoadedConfig.binding_origins`).
A relative path is relative to the directory of the file that lists it, ``~``
is expanded, and a workspace file may only name files inside its workspace
(symlinks resolved): opening a repository must not read the user's other files
into a sandbox that may see less than the host.

Every unusable entry is a :class:`ConfigIssue` at ``repl.bindings[<index>]`` of
its file (code PTC-4010, reason ``binding-*``); the usable ones still load.
"""

from __future__ import annotations

import errno
import hashlib
import keyword
from collections.abc import Sequence
from pathlib import Path

import attrs
import orjson

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
    """Read every file ``loaded.config.repl.bindings`` names; never raises for a bad entry.

    A module name already bound by an earlier entry is refused (``binding-duplicate``): the later file
    would silently replace the earlier one's names in the kernel. Entries of the workspace file
    (``loaded.workspace_file``) must resolve inside ``<workspace>`` of ``<workspace>/.ptc-plus/config.toml``.

    :raises ValueError: ``loaded.binding_origins`` does not match ``loaded.config.repl.bindings`` (a
        :class:`LoadedConfig` built by hand rather than by :func:`.load_config` / :func:`.combine`).
    """
    workspace = _workspace_root(loaded.workspace_file)
    modules: list[tuple[str, str]] = []
    sources: dict[str, str] = {}
    issues: list[ConfigIssue] = []
    for written, (file, index) in zip(loaded.config.repl.bindings, loaded.binding_origins, strict=True):
        confined = workspace if file == loaded.workspace_file else None
        found = _load_one(written, file, confined)
        issue_at = f"repl.bindings[{index}]"
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


def _workspace_root(workspace_file: str | None) -> Path | None:
    """``<workspace>`` of ``<workspace>/.ptc-plus/config.toml``, symlinks resolved."""
    return Path(workspace_file).resolve().parent.parent if workspace_file is not None else None


def _load_one(written: str, file: str, workspace: Path | None) -> tuple[str, str, str] | _Refused:
    """``(module name, source, resolved path)`` of one entry, or why it does not load.

    ``workspace``: the entry comes from that workspace's file and must resolve inside it.
    """
    path = Path(written).expanduser()
    if not path.is_absolute():
        path = Path(file).parent / path
    real = path.resolve()
    shown = str(real)
    if workspace is not None and not real.is_relative_to(workspace):
        return _Refused("binding-outside-workspace", {"path": shown, "workspace": str(workspace)})
    name = real.stem if real.suffix == ".py" else real.name
    if real.suffix != ".py" or not name.isidentifier() or keyword.iskeyword(name):
        return _Refused("binding-name", {"path": shown})
    try:
        raw = read_regular_file(real, MAX_BINDING_BYTES)
    except FileNotFoundError:
        return _Refused("binding-missing", {"path": shown})
    except NotRegularFile:
        return _Refused("binding-not-a-file", {"path": shown})
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM):
            return _Refused("binding-permission", {"path": shown})
        return _Refused("binding-unreadable", {"path": shown, "detail": exc.strerror or str(exc)})
    if len(raw) > MAX_BINDING_BYTES:
        return _Refused("binding-too-large", {"path": shown, "limit": str(MAX_BINDING_BYTES)})
    try:
        source = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _Refused("binding-not-utf8", {"path": shown, "byte": f"0x{raw[exc.start]:02x}"})
    return name, source, shown
