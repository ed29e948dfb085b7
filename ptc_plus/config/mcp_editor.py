"""Edit ``[mcp.servers.<name>]`` and ``[mcp.consent]`` in place: ``ptc-plus mcp add|remove|trust``.

Edits go through the same locked, atomic, comment-keeping path as
``capabilities set`` (:mod:`.editor`, ADR 0030, 0048): a file that is not
valid TOML is never rewritten, a table the edit adds is set off by a blank
line, and removing a server's table takes its own comment block with it.
Consent is written to the user file only (ADR 0071).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import tomlkit
from tomlkit.items import InlineTable, Table

from ptc_plus.config.converter import CONVERTER
from ptc_plus.config.editor import _keep_neighbour_comments, _parse, _set_off
from ptc_plus.config.errors import ConfigEditRefused, McpServerExists, McpServerNameInvalid, McpServerUnknown
from ptc_plus.config.issues import ConfigIssue
from ptc_plus.config.mcp import consent_key, fingerprint
from ptc_plus.config.model import SERVER_NAME, McpServer
from ptc_plus.config.paths import Scope, workspace_config_file
from ptc_plus.config.source import read_config
from ptc_plus.config.user_file import locked_user_file
from ptc_plus.config.workspace_file import LockedConfigFile, locked_workspace_file

_DEFAULTS = McpServer(command="-")


@attrs.frozen(kw_only=True)
class McpEdit:
    """What an edit did to ``file``: ``changed`` is false when the file already said so."""

    file: Path
    changed: bool


def check_server_name(name: str) -> None:
    """:raises McpServerNameInvalid: ``name`` is not ``[A-Za-z0-9_-]+``."""
    if not SERVER_NAME.fullmatch(name):
        raise McpServerNameInvalid(name=name)


def add_server(scope: Scope, name: str, server: McpServer, *, workspace: Path, user_file: Path) -> McpEdit:
    """Write ``[mcp.servers.<name>]`` into the ``scope`` file; the same definition again changes nothing.

    :raises McpServerNameInvalid: a bad name.
    :raises McpServerExists: the file defines ``name`` differently (remove it first).
    :raises ConfigEditRefused: the file cannot be edited safely (as :func:`.set_capability`).
    """
    check_server_name(name)
    with _locked(scope, workspace, user_file, create=True) as locked:
        assert locked is not None
        found = locked.read()
        original = found.text if found is not None else None
        existing = _servers(found.data if found is not None else {}).get(name)
        if existing is not None:
            if _same(existing, server):
                return McpEdit(file=locked.path, changed=False)
            raise McpServerExists(name=name, file=str(locked.path))
        doc = _parse(original, locked.path)
        servers = _super_table(_super_table(doc, "mcp", locked.path), "servers", locked.path)
        entry = tomlkit.table()
        for key, value in _table_of(server).items():
            entry[key] = _inline(value)
        servers[name] = entry
        locked.write(_set_off(tomlkit.dumps(doc), ("mcp", "servers", name)))
        return McpEdit(file=locked.path, changed=True)


def remove_server(scope: Scope, name: str, *, workspace: Path, user_file: Path) -> McpEdit:
    """Remove ``[mcp.servers.<name>]`` from the ``scope`` file, its comment block with it.

    :raises McpServerUnknown: the file does not define ``name``.
    """
    check_server_name(name)
    with _locked(scope, workspace, user_file, create=False) as locked:
        found = locked.read() if locked is not None else None
        if locked is None or found is None or name not in _servers(found.data):
            path = locked.path if locked is not None else _path(scope, workspace, user_file)
            raise McpServerUnknown(name=name, file=str(path))
        doc = _parse(found.text, locked.path)
        mcp: Any = doc["mcp"]
        servers: Any = mcp["servers"]
        del servers[name]
        if not servers and isinstance(servers, Table) and servers.is_super_table():
            del mcp["servers"]
        if not mcp and isinstance(mcp, Table) and mcp.is_super_table():
            del doc["mcp"]
        text = _keep_neighbour_comments(found.text, ("mcp", "servers", name), tomlkit.dumps(doc))
        locked.write(text)
        return McpEdit(file=locked.path, changed=True)


def record_consent(user_file: Path, workspace: Path, name: str, server: McpServer) -> McpEdit:
    """Record in the user file that ``server`` (exactly this definition) may run as ``name`` in ``workspace``."""
    check_server_name(name)
    place, mark = consent_key(workspace), fingerprint(server)
    with locked_user_file(user_file) as locked:
        found = locked.read()
        consents = (found.data if found is not None else {}).get("mcp", {}).get("consent", {})
        if isinstance(consents, dict) and isinstance(consents.get(place), dict) and consents[place].get(name) == mark:
            return McpEdit(file=locked.path, changed=False)
        doc = _parse(found.text if found is not None else None, locked.path)
        consent = _super_table(_super_table(doc, "mcp", locked.path), "consent", locked.path)
        entry: Any = consent.get(place)
        adds = entry is None
        if entry is None:
            entry = tomlkit.table()
            consent[place] = entry
        elif not isinstance(entry, Table | InlineTable):
            raise ConfigEditRefused(file=str(locked.path), detail=f"'mcp.consent.{place}' is not a table")
        entry[name] = mark
        text = tomlkit.dumps(doc)
        locked.write(_set_off(text, ("mcp", "consent", place)) if adds else text)
        return McpEdit(file=locked.path, changed=True)


def require_readable(path: Path) -> None:
    """Raise the loader's error for ``path`` when it exists but is unusable (a later edit of it would fail).

    :raises ConfigUnreadable: it cannot be read or is not UTF-8.
    :raises ConfigSyntaxError: it is not TOML.
    """
    found = read_config(path)
    if isinstance(found, ConfigIssue):
        raise found.to_error()


def _path(scope: Scope, workspace: Path, user_file: Path) -> Path:
    return user_file if scope is Scope.USER else workspace_config_file(workspace)


@contextlib.contextmanager
def _locked(scope: Scope, workspace: Path, user_file: Path, *, create: bool) -> Iterator[LockedConfigFile | None]:
    if scope is Scope.USER:
        with locked_user_file(user_file) as locked:
            yield locked
    else:
        with locked_workspace_file(workspace, create=create) as maybe:
            yield maybe


def _servers(data: dict[str, Any]) -> dict[str, Any]:
    mcp = data.get("mcp")
    servers = mcp.get("servers") if isinstance(mcp, dict) else None
    return servers if isinstance(servers, dict) else {}


def _same(table: Any, server: McpServer) -> bool:
    """Whether the file's ``table`` defines exactly ``server`` (written in whatever way)."""
    try:
        return bool(CONVERTER.structure(table, McpServer) == server)
    except Exception:  # a hand-written table that does not even structure is not this definition
        return False


def _table_of(server: McpServer) -> dict[str, Any]:
    """The keys a file needs for ``server``: ``command``, then every other key that is not its default."""
    table: dict[str, Any] = {"command": server.command}
    if server.args:
        table["args"] = list(server.args)
    if server.env:
        table["env"] = dict(server.env)
    if server.cwd is not None:
        table["cwd"] = server.cwd
    if server.timeout_s != _DEFAULTS.timeout_s:
        table["timeout_s"] = server.timeout_s
    if server.start_timeout_s != _DEFAULTS.start_timeout_s:
        table["start_timeout_s"] = server.start_timeout_s
    if not server.enabled:
        table["enabled"] = False
    return table


def _inline(value: Any) -> Any:
    """``env`` as an inline table on one line, like ``args`` (a server's definition reads as one block)."""
    if isinstance(value, dict):
        inline = tomlkit.inline_table()
        inline.update(value)
        return inline
    return value


def _super_table(parent: Any, key: str, path: Path) -> Any:
    """``parent[key]`` as a table, added as a header-less super table when missing."""
    table = parent.get(key)
    if table is None:
        table = tomlkit.table(is_super_table=True)
        parent[key] = table
    elif not isinstance(table, Table | InlineTable):
        raise ConfigEditRefused(file=str(path), detail=f"'{key}' is not a table")
    return table
