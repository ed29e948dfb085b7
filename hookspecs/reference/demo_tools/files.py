"""Workspace file tools: list, read, search (parallel) and write (exclusive), confined to the workspace.

A program may race these tools (swap a directory for a symlink out of the
workspace, leave a FIFO where a file was): every access goes through
:mod:`hookspecs.workspace_files`, which resolves paths beneath the workspace
on the opened descriptors, never follows a symlink and refuses anything but
regular files. The bodies do their file I/O in a worker thread
(``asyncio.to_thread``), so no file — however slow or strange — can stall the
host's event loop, which also runs every run's timer.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence
from pathlib import Path

from hookspecs.reference.demo_tools.blocking import in_thread
from hookspecs.services import ToolContext, ToolDefinition, ToolFailure, tool
from hookspecs.types import Concurrency, JSONObject, JSONValue
from hookspecs.workspace_files import (
    WorkspacePathError,
    read_bytes,
    relative_parts,
    replace_file,
    walk_files,
    workspace_root,
)

MAX_READ_BYTES = 64 * 1024 * 1024
"""read_file refuses a larger file rather than load it into host memory (a sparse file costs a program nothing)."""
MAX_SEARCH_FILE_BYTES = 16 * 1024 * 1024
"""search_files skips larger files."""
_SKIP_DIRS = frozenset({".git", ".agent-host", ".demo", ".ptc-plus", "__pycache__", ".venv"})
# Host and plugin state: never listed or searched, and write_file refuses to write there (a program
# calling write_file would otherwise change, from the host, what its sandbox binds read-only). Git
# state at any depth: hooks and config of a nested repository run on the host too (ADR 0050).
_STATE_DIRS = frozenset({".agent-host", ".demo", ".ptc-plus"})
_GIT = ".git"


def _cancelled() -> ToolFailure:
    return ToolFailure("cancelled", "the call was cancelled")


def _protected(root: Path, parts: tuple[str, ...], protected_paths: Sequence[Path]) -> bool:
    """Whether ``parts`` (relative to ``root``) lies in host, plugin or git state."""
    if (parts and parts[0] in _STATE_DIRS) or _GIT in parts:
        return True
    for protected in protected_paths:
        absolute = Path(os.path.normpath(root / protected))
        if absolute == root or not absolute.is_relative_to(root):
            continue
        prefix = absolute.relative_to(root).parts
        if parts[: len(prefix)] == prefix:
            return True
    return False


def file_tools(root: Path) -> list[ToolDefinition]:
    def list_sync(args: JSONObject, ctx: ToolContext) -> JSONValue:
        pattern = str(args.get("pattern", "*"))
        limit = int(args.get("max_entries", 200))
        entries: list[JSONValue] = []
        with workspace_root(root) as root_fd:
            try:
                for found in walk_files(root_fd, str(args.get("path", ".")), skip_directories=_SKIP_DIRS):
                    if ctx.cancelled.is_set():
                        raise _cancelled()
                    if not fnmatch.fnmatch(found.path.rpartition("/")[2], pattern):
                        continue
                    if len(entries) == limit:
                        return {"entries": entries, "truncated": True}
                    entries.append({"path": found.path, "bytes": found.size})
            except WorkspacePathError as error:
                raise error.tool_failure() from None
        return {"entries": entries, "truncated": False}

    def read_sync(args: JSONObject, ctx: ToolContext) -> JSONValue:
        with workspace_root(root) as root_fd:
            try:
                data = read_bytes(root_fd, str(args["path"]), max_bytes=MAX_READ_BYTES + 1)
            except WorkspacePathError as error:
                raise error.tool_failure() from None
        if len(data) > MAX_READ_BYTES:
            raise ToolFailure("file-too-large", f"{args['path']!r} is larger than {MAX_READ_BYTES} bytes")
        lines = data.decode("utf-8", errors="replace").splitlines()
        offset, limit = int(args.get("offset", 0)), int(args.get("limit", 400))
        return {"path": str(args["path"]), "lines": lines[offset : offset + limit], "total_lines": len(lines)}

    def search_sync(args: JSONObject, ctx: ToolContext) -> JSONValue:
        query = str(args["query"])
        sensitive = bool(args.get("case_sensitive", False))
        needle = query if sensitive else query.lower()
        glob = str(args.get("glob", "*"))
        limit = int(args.get("max_results", 50))
        matches: list[JSONValue] = []
        with workspace_root(root) as root_fd:
            for found in walk_files(root_fd, ".", skip_directories=_SKIP_DIRS):
                if ctx.cancelled.is_set():
                    raise _cancelled()
                if found.size > MAX_SEARCH_FILE_BYTES or not fnmatch.fnmatch(found.path.rpartition("/")[2], glob):
                    continue
                try:
                    data = read_bytes(root_fd, found.path, max_bytes=MAX_SEARCH_FILE_BYTES + 1)
                    if len(data) > MAX_SEARCH_FILE_BYTES:
                        continue  # grew since it was listed
                    text = data.decode("utf-8")
                except (WorkspacePathError, UnicodeDecodeError, OSError):
                    continue  # replaced since it was listed (a symlink, a FIFO), unreadable, or not text
                for number, line in enumerate(text.splitlines(), start=1):
                    if needle in (line if sensitive else line.lower()):
                        matches.append({"path": found.path, "line": number, "text": line.strip()[:200]})
                        if len(matches) >= limit:
                            return {"matches": matches, "truncated": True}
        return {"matches": matches, "truncated": False}

    def write_sync(args: JSONObject, ctx: ToolContext) -> JSONValue:
        path = str(args["path"])
        data = str(args["content"]).encode("utf-8")
        try:
            parts = relative_parts(path)
            if not parts:
                raise ToolFailure("not-a-regular-file", f"{path!r} is the workspace itself")
            if _protected(root, parts, ctx.services.protected_paths):
                raise ToolFailure("protected-path", f"{path!r} is host or plugin state; write_file does not change it")
            with workspace_root(root) as root_fd:
                replace_file(root_fd, path, data, create_parents=True)
        except WorkspacePathError as error:
            raise error.tool_failure() from None
        return {"path": path, "bytes": len(data)}

    path_prop = {"type": "string", "description": "Path relative to the workspace root."}
    return [
        tool(
            name="list_files",
            description="List files under a workspace directory, recursively, with their sizes.",
            input_schema={
                "type": "object",
                "properties": {
                    "path": {**path_prop, "default": "."},
                    "pattern": {"type": "string", "description": "fnmatch pattern on file names.", "default": "*"},
                    "max_entries": {"type": "integer", "minimum": 1, "maximum": 5000, "default": 200},
                },
                "additionalProperties": False,
            },
            output_schema={
                "type": "object",
                "properties": {
                    "entries": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"path": {"type": "string"}, "bytes": {"type": "integer"}},
                            "required": ["path", "bytes"],
                        },
                    },
                    "truncated": {"type": "boolean"},
                },
                "required": ["entries", "truncated"],
            },
            concurrency=Concurrency.PARALLEL,
        )(in_thread(list_sync)),
        tool(
            name="read_file",
            description="Read a UTF-8 text file from the workspace, as lines.",
            input_schema={
                "type": "object",
                "properties": {
                    "path": path_prop,
                    "offset": {
                        "type": "integer",
                        "minimum": 0,
                        "default": 0,
                        "description": "First line (0-based).",
                    },
                    "limit": {"type": "integer", "minimum": 1, "default": 400, "description": "Max lines."},
                },
                "required": ["path"],
                "additionalProperties": False,
            },
            concurrency=Concurrency.PARALLEL,
        )(in_thread(read_sync)),
        tool(
            name="search_files",
            description="Search workspace text files for a substring; returns matching lines.",
            input_schema={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1},
                    "glob": {"type": "string", "default": "*", "description": "fnmatch pattern on file names."},
                    "case_sensitive": {"type": "boolean", "default": False},
                    "max_results": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 50},
                },
                "required": ["query"],
                "additionalProperties": False,
            },
            concurrency=Concurrency.PARALLEL,
        )(in_thread(search_sync)),
        tool(
            name="write_file",
            description="Create or replace a text file in the workspace (atomic replace).",
            input_schema={
                "type": "object",
                "properties": {"path": path_prop, "content": {"type": "string"}},
                "required": ["path", "content"],
                "additionalProperties": False,
            },
            concurrency=Concurrency.EXCLUSIVE,
        )(in_thread(write_sync)),
    ]
