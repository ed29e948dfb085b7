"""Reading and parsing one config file: the one place a file becomes TOML data or a located problem.

Both the loader and the editor come through here, so the same bad file gives
the same message whichever command met it: tomllib's wording for syntax errors
(tomlkit, which the editor needs to keep comments, only parses text this has
already accepted), with its position moved into ``file:line:column``. A
file that cannot be read — permission denied, a directory, a FIFO, bytes
that are not UTF-8 — is a :class:`ConfigUnreadable` problem with a plain
reason, never an exception.
"""

from __future__ import annotations

import errno
import os
import stat
import tomllib
from pathlib import Path
from typing import Any

import attrs

from ptc_plus.config.errors import ConfigSyntaxError, ConfigTooDeep, ConfigUnreadable
from ptc_plus.config.issues import ConfigIssue
from ptc_plus.config.locate import Position, nesting_position, syntax_position
from ptc_plus.i18n import message

MAX_BYTES = 1024 * 1024
"""A config file is a few hundred bytes; anything past a mebibyte is not one (and is not read whole)."""
MAX_DEPTH = 32
"""Levels of tables, dotted keys, arrays and inline tables a config file may nest (the deepest real key,
``mcp.servers.<name>.env.<VAR>``, is five): deeper text is refused before anything recurses over it."""


@attrs.frozen(kw_only=True)
class ConfigText:
    """A config file's text and the TOML data it holds."""

    file: str
    text: str
    data: dict[str, Any]


def read_config(path: Path) -> ConfigText | ConfigIssue | None:
    """``path`` read and parsed; a :class:`ConfigIssue` when it is unusable; ``None`` when it does not exist."""
    file = str(path)
    try:
        raw = read_regular_file(path)
    except FileNotFoundError:
        return None
    except NotRegularFile:
        return _unreadable(file, "not-a-file")
    except OSError as exc:
        return os_problem(file, exc)
    return config_from_bytes(raw, file)


def config_from_bytes(raw: bytes, file: str) -> ConfigText | ConfigIssue:
    """``raw`` decoded as UTF-8 and parsed; a located issue when it is neither."""
    if len(raw) > MAX_BYTES:
        return _unreadable(file, "too-large", limit=str(MAX_BYTES))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        issue = _unreadable(file, "not-utf8", byte=f"0x{raw[exc.start]:02x}")
        return attrs.evolve(issue, line=raw.count(b"\n", 0, exc.start) + 1)
    return parse_config(text, file)


def parse_config(text: str, file: str) -> ConfigText | ConfigIssue:
    """``text`` parsed by tomllib; a located :class:`ConfigSyntaxError` issue when it is not TOML, a located
    :class:`ConfigTooDeep` one when it nests deeper than :data:`MAX_DEPTH` (tomllib itself recurses per level,
    so such text may not even parse: its ``RecursionError`` is this issue too, never an internal error)."""
    where = nesting_position(text, MAX_DEPTH)
    if where is not None:
        return _too_deep(file, where)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        detail, where = syntax_position(str(exc))
        issue = ConfigIssue.file_problem(ConfigSyntaxError, file, detail=detail)
        if where is not None:
            issue = attrs.evolve(issue, line=where.line, column=where.column)
        return issue
    except RecursionError:  # the scan above misjudged some syntax; still the same answer
        return _too_deep(file, None)
    if _depth(data) > MAX_DEPTH:
        return _too_deep(file, None)
    return ConfigText(file=file, text=text, data=data)


def _too_deep(file: str, where: Position | None) -> ConfigIssue:
    issue = ConfigIssue.file_problem(ConfigTooDeep, file, limit=str(MAX_DEPTH))
    return attrs.evolve(issue, line=where.line, column=where.column) if where is not None else issue


def _depth(data: Any) -> int:
    """How many tables and arrays deep ``data`` nests, counted without recursion."""
    deepest, stack = 0, [(data, 0)]
    while stack:
        value, level = stack.pop()
        if isinstance(value, dict):
            stack += [(item, level + 1) for item in value.values()]
        elif isinstance(value, list):
            stack += [(item, level + 1) for item in value]
        else:
            deepest = max(deepest, level)
    return deepest


class NotRegularFile(Exception):
    """A directory, FIFO or device is where a file a config names should be."""


def read_regular_file(path: Path, limit: int = MAX_BYTES) -> bytes:
    """At most ``limit + 1`` bytes of the regular file ``path`` (one more than allowed shows it is too large).

    :raises NotRegularFile: ``path`` is not a regular file.
    :raises OSError: it cannot be opened or read.
    """
    # O_NONBLOCK: a FIFO at the path must not hang the command or session that reads it.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(limit + 1)
    finally:
        os.close(fd)
    return data


def os_problem(file: str, exc: OSError) -> ConfigIssue:
    """A :class:`ConfigUnreadable` issue for ``exc``, in plain words for the errors a user can cause."""
    if exc.errno in (errno.EACCES, errno.EPERM):
        return _unreadable(file, "permission")
    if exc.errno == errno.EISDIR:
        return _unreadable(file, "not-a-file")
    if exc.errno in (errno.ENOTDIR, errno.ELOOP):
        return _unreadable(file, "path")
    return _unreadable(file, "os", detail=exc.strerror or str(exc))


def _unreadable(file: str, why: str, **params: str) -> ConfigIssue:
    """A :class:`ConfigUnreadable` issue; its ``detail`` is the ``config.unreadable.<why>`` message, in English
    here and re-rendered per locale by :meth:`ConfigIssue.message`."""
    return ConfigIssue(
        file=file,
        path="",
        code=ConfigUnreadable.code,
        reason=f"unreadable.{why}",
        params={**params, "detail": message(f"config.unreadable.{why}", "en", **params)},
    )
