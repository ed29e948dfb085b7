"""The last successful ``tools/list`` of each MCP server definition, kept in the user state (ADR 0097).

Planning needs a server's tools, not the server: a session start, ``capabilities
plan``/``search``, ``stats`` and ``llm tools list`` plan from this snapshot and
leave the server stopped until a program (or discovery's call) needs it. The
server is started only when its snapshot is missing or unreadable, or when the
user asks (a refresh, ``capabilities plan --refresh-sources``, ``mcp list
--check``); every successful start and ``tools/list_changed`` writes the
snapshot again.

Contract:

- One file per *exact* definition, ``<state>/mcp-tools/<digest>.json``: the
  digest covers ``command``, ``args``, ``cwd`` and a digest of ``env`` (names
  and values; the values themselves are never written), so a changed
  definition never reads its predecessor's tools. The server's name and its
  timeouts are not part of it (they change nothing a server lists).
- Versioned (``version``), encoded with the strict converter and orjson. A file
  that does not decode (not JSON, another version, another digest, a tool that
  is no MCP tool) is :class:`SnapshotUnreadable` (PTC-7023): the caller says
  so and starts the server, whose listing then replaces the file.
- Writes take a :class:`filelock.FileLock` of the directory, write a temporary
  file beside the entry, ``fsync`` it and rename it over the entry: a reader
  (no lock needed) sees the old snapshot or the new one, never a torn one.
- Where: ``$XDG_STATE_HOME/ptc-plus`` (an absolute one), else
  ``~/.local/state/ptc-plus`` — the user's, never the workspace's.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import cattrs
import filelock
import orjson

from hookspecs.serialization import canonical_bytes, structure
from ptc_plus.adapters.mcp.errors import SnapshotUnreadable
from ptc_plus.i18n import message

if TYPE_CHECKING:  # only a live listing, being saved, is the SDK's (ADR 0105)
    import mcp.types as mt

VERSION = 1
APP_DIR = "ptc-plus"
SNAPSHOT_DIR = "mcp-tools"
_LOCK = ".lock"
_LOCK_TIMEOUT_S = 10.0


def state_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_STATE_HOME/ptc-plus`` when that is absolute (the XDG rule), else ``~/.local/state/ptc-plus``."""
    env = os.environ if env is None else env
    xdg = env.get("XDG_STATE_HOME", "")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / APP_DIR
    home = env.get("HOME") or str(Path.home())
    return Path(home) / ".local" / "state" / APP_DIR


def definition_digest(command: str, args: Sequence[str], env: Sequence[tuple[str, str]], cwd: str | None) -> str:
    """The digest a definition's snapshot is filed under (``env`` enters as a digest of its sorted pairs)."""
    env_digest = hashlib.sha256(canonical_bytes(sorted([list(pair) for pair in env]))).hexdigest()
    what = {"command": command, "args": list(args), "env": env_digest, "cwd": cwd}
    return hashlib.sha256(canonical_bytes(what)).hexdigest()[:32]


@attrs.frozen(kw_only=True)
class SnapshotTool:
    """The fields of a snapshot's tool that planning reads, named as on ``mt.Tool`` (the live listing's type).

    Planning from a snapshot must not import the SDK (pydantic and all: most of a start-up's CPU time), so a
    snapshot's tools are checked and read as plain JSON here; a call starts the server, whose live listing is
    the SDK's own.
    """

    name: str
    title: str | None = None
    description: str | None = None
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None

    @classmethod
    def of_json(cls, tool: object) -> SnapshotTool:
        """``tool`` (``mt.Tool``'s JSON form, by alias) read; :raises ValueError: it is no MCP tool."""
        if not isinstance(tool, dict):
            raise ValueError(f"a tool is a {type(tool).__name__}, not an object")
        name, schema, output = tool.get("name"), tool.get("inputSchema"), tool.get("outputSchema")
        title, description = tool.get("title"), tool.get("description")
        if not isinstance(name, str):
            raise ValueError(f"a tool's name is {name!r}")
        if not isinstance(schema, dict) or not all(isinstance(key, str) for key in schema):
            raise ValueError(f"tool {name}: inputSchema is no object")
        if output is not None and (not isinstance(output, dict) or not all(isinstance(key, str) for key in output)):
            raise ValueError(f"tool {name}: outputSchema is no object")
        for field, value in (("title", title), ("description", description)):
            if value is not None and not isinstance(value, str):
                raise ValueError(f"tool {name}: {field} is no string")
        return cls(name=name, title=title, description=description, input_schema=schema, output_schema=output)


@attrs.frozen(kw_only=True)
class ToolsSnapshot:
    """One server definition's last successful ``tools/list`` (and what its handshake declared)."""

    version: int = VERSION
    digest: str
    server: str
    """The name it was listed under (for people reading the file; not part of the key)."""
    taken_at: float
    """When the listing was taken (seconds since the epoch)."""
    instructions: str = ""
    resources: bool = False
    tools: tuple[dict[str, Any], ...] = ()
    """Each tool as the server declared it (``mt.Tool``'s JSON form)."""

    def planned_tools(self) -> tuple[SnapshotTool, ...]:
        """What a plan reads of each tool, decoded without the SDK (ADR 0105).

        :raises ValueError: a tool that is no MCP tool (no string ``name``, an ``inputSchema`` that is no object, …).
        """
        return tuple(SnapshotTool.of_json(tool) for tool in self.tools)

    def age_s(self, now: float | None = None) -> float:
        return max(0.0, (time.time() if now is None else now) - self.taken_at)

    def taken_text(self) -> str:
        """``taken_at`` in UTC, to the minute (``2026-12-01 13:05Z``)."""
        return datetime.fromtimestamp(self.taken_at, UTC).strftime("%Y-%m-%d %H:%MZ")

    def provenance(self, now: float | None = None) -> str:
        """Which snapshot a plan used and how old it is, in the current locale."""
        return message(
            "ptc.mcp.snapshot.used", server=self.server, taken_at=self.taken_text(), age=age_text(self.age_s(now))
        )


def age_text(seconds: float) -> str:
    """An age people read at a glance: seconds, minutes, hours or days (whole, rounded down)."""
    whole = int(seconds)
    if whole < 60:
        return message("ptc.mcp.age.seconds", n=whole)
    if whole < 3600:
        return message("ptc.mcp.age.minutes", n=whole // 60)
    if whole < 86400:
        return message("ptc.mcp.age.hours", n=whole // 3600)
    return message("ptc.mcp.age.days", n=whole // 86400)


@attrs.frozen(kw_only=True)
class SnapshotStore:
    """The snapshot files under :attr:`directory` (``<state>/mcp-tools``)."""

    directory: Path

    def path(self, digest: str) -> Path:
        return self.directory / f"{digest}.json"

    def load(self, digest: str, server: str) -> ToolsSnapshot | None:
        """The snapshot filed under ``digest``; ``None`` when there is none.

        :raises SnapshotUnreadable: the file exists but does not decode as a snapshot of this digest.
        """
        path = self.path(digest)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as error:
            raise SnapshotUnreadable(server=server, path=str(path), detail=f"{type(error).__name__}: {error}") from None
        try:
            document = orjson.loads(data)
            if not isinstance(document, dict) or document.get("version") != VERSION:
                found = document.get("version") if isinstance(document, dict) else None
                raise ValueError(f"format version {found!r}, this PTC Plus reads {VERSION}")
            snapshot = structure(document, ToolsSnapshot)
            if snapshot.digest != digest:
                raise ValueError(f"filed under {digest} but made for {snapshot.digest}")
            snapshot.planned_tools()  # a tool that is no MCP tool is a damaged file, found now
        except (orjson.JSONDecodeError, ValueError, TypeError, cattrs.BaseValidationError) as e:
            raise SnapshotUnreadable(server=server, path=str(path), detail=_short(e)) from None
        return snapshot

    def save(
        self, digest: str, server: str, tools: Sequence[mt.Tool], *, instructions: str = "", resources: bool = False
    ) -> ToolsSnapshot:
        """File a new snapshot under ``digest`` (atomic replace under the directory's lock); returns it."""
        snapshot = ToolsSnapshot(
            digest=digest,
            server=server,
            taken_at=time.time(),
            instructions=instructions,
            resources=resources,
            tools=tuple(tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools),
        )
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        data = canonical_bytes(snapshot)
        with filelock.FileLock(str(self.directory / _LOCK), timeout=_LOCK_TIMEOUT_S):
            fd, temporary = tempfile.mkstemp(prefix=f".{digest}.", suffix=".tmp", dir=self.directory)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(temporary, self.path(digest))
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise
        return snapshot


def default_store(env: Mapping[str, str] | None = None) -> SnapshotStore:
    """The user's snapshot store (the environment is read now: a test or an evaluation run points it elsewhere)."""
    return SnapshotStore(directory=state_dir(env) / SNAPSHOT_DIR)


def _short(error: Exception) -> str:
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text[:200]}"
