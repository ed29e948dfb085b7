"""A small notes store in SQLite: add and delete are exclusive, search and list are parallel.

The store is ``<workspace>/.demo/notes.sqlite``, in the workspace a program
shares with the host. SQLite opens files by name and canonicalises the name
itself (even ``/proc/self/fd/N/...`` is read back and reopened as a path), so
it never gets a path here: the store is read with
:func:`hookspecs.workspace_files.read_bytes` (beneath the workspace, no
symlink followed, regular files only), loaded into an in-memory database
(``deserialize``), changed there, and written back whole with
:func:`~hookspecs.workspace_files.replace_file` (a new file renamed over the
old one inside the opened ``.demo`` directory). A ``.demo`` or store that is
a symlink is refused, whatever it points to. Writers serialize on an
``flock`` of the ``.demo`` directory (polled, so a program holding the lock
cannot hang the host); readers need no lock, since a replace is atomic. The
work runs in a worker thread, off the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

from hookspecs.reference.demo_tools.blocking import in_thread
from hookspecs.services import ToolContext, ToolDefinition, ToolFailure, tool
from hookspecs.types import Concurrency, JSONObject, JSONValue
from hookspecs.workspace_files import (
    PathNotFound,
    WorkspacePathError,
    open_directory,
    read_bytes,
    replace_file,
    workspace_root,
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS notes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT ''
)
"""
MAX_STORE_BYTES = 64 * 1024 * 1024
"""A larger store is refused rather than loaded into the host's memory."""
_LOCK_ATTEMPTS = 500
_LOCK_PAUSE_S = 0.01  # with the attempts: give up after about five seconds, like SQLite's default busy timeout


def _load(root_fd: int, store: str) -> sqlite3.Connection:
    """The store as an in-memory database (empty when there is none yet)."""
    try:
        data = read_bytes(root_fd, store, max_bytes=MAX_STORE_BYTES + 1)
    except PathNotFound:
        data = b""
    if len(data) > MAX_STORE_BYTES:
        raise ToolFailure("store-too-large", f"the notes store is larger than {MAX_STORE_BYTES} bytes")
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("PRAGMA trusted_schema = OFF")  # the file is workspace data: its schema runs nothing
        if data:
            conn.deserialize(data)
        conn.execute(_SCHEMA)
    except sqlite3.DatabaseError as error:
        conn.close()
        raise _corrupt(error) from None
    return conn


def _corrupt(error: sqlite3.DatabaseError) -> ToolFailure:
    return ToolFailure("corrupt-store", f"the notes store is not a usable notes database: {error}")


@contextlib.contextmanager
def _writer_lock(root_fd: int, directory: str, cancelled: asyncio.Event) -> Iterator[None]:
    fd = open_directory(root_fd, directory, create=True)
    try:
        for _ in range(_LOCK_ATTEMPTS):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if cancelled.is_set():
                    raise ToolFailure("cancelled", "the call was cancelled") from None
                time.sleep(_LOCK_PAUSE_S)
        else:
            raise ToolFailure("busy", "the notes store is locked by someone else; try again")
        yield
    finally:
        os.close(fd)  # releases the lock


def _row(row: tuple[int, str, str, str]) -> JSONValue:
    return {"id": row[0], "title": row[1], "body": row[2], "tags": [t for t in row[3].split(",") if t]}


def note_tools(root: Path, directory: str = ".demo", filename: str = "notes.sqlite") -> list[ToolDefinition]:
    """The notes tools, keeping their store at ``<root>/<directory>/<filename>``."""
    store = f"{directory}/{filename}"

    def change(ctx: ToolContext, sql: str, params: tuple[object, ...]) -> sqlite3.Cursor:
        """Run one changing statement on the store and write it back; the cursor of that statement."""
        with workspace_root(root) as root_fd:
            try:
                with _writer_lock(root_fd, directory, ctx.cancelled):
                    conn = _load(root_fd, store)
                    try:
                        with conn:
                            cur = conn.execute(sql, params)
                        if cur.rowcount:
                            replace_file(root_fd, store, conn.serialize(), create_parents=False)
                    finally:
                        conn.close()
            except WorkspacePathError as error:
                raise error.tool_failure() from None
            except sqlite3.DatabaseError as error:
                raise _corrupt(error) from None
        return cur

    def add_sync(args: JSONObject, ctx: ToolContext) -> JSONValue:
        tags = ",".join(sorted({str(t).strip() for t in args.get("tags", []) if str(t).strip()}))
        cur = change(ctx, "INSERT INTO notes (title, body, tags) VALUES (?, ?, ?)", (args["title"], args["body"], tags))
        return {"id": cur.lastrowid}

    def search_sync(args: JSONObject, ctx: ToolContext) -> JSONValue:
        like = f"%{args.get('query', '')}%"
        sql = "SELECT id, title, body, tags FROM notes WHERE (title LIKE ? OR body LIKE ?)"
        params: list[object] = [like, like]
        if args.get("tag"):
            sql += " AND (',' || tags || ',') LIKE ?"
            params.append(f"%,{args['tag']},%")
        sql += " ORDER BY id LIMIT ?"
        params.append(int(args.get("limit", 20)))
        with workspace_root(root) as root_fd:
            try:
                conn = _load(root_fd, store)
            except WorkspacePathError as error:
                raise error.tool_failure() from None
        try:
            return {"notes": [_row(r) for r in conn.execute(sql, params)]}
        except sqlite3.DatabaseError as error:
            raise _corrupt(error) from None
        finally:
            conn.close()

    def delete_sync(args: JSONObject, ctx: ToolContext) -> JSONValue:
        cur = change(ctx, "DELETE FROM notes WHERE id = ?", (int(args["id"]),))
        if cur.rowcount == 0:
            raise ToolFailure("not-found", f"no note with id {args['id']}")
        return {"deleted": int(args["id"])}

    return [
        tool(
            name="notes_add",
            description="Add a note (title, body, optional tags) to the notes store; returns its id.",
            input_schema={
                "type": "object",
                "properties": {
                    "title": {"type": "string", "minLength": 1, "maxLength": 200},
                    "body": {"type": "string"},
                    "tags": {"type": "array", "items": {"type": "string"}, "default": []},
                },
                "required": ["title", "body"],
                "additionalProperties": False,
            },
            output_schema={"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]},
            concurrency=Concurrency.EXCLUSIVE,
        )(in_thread(add_sync)),
        tool(
            name="notes_search",
            description="Find notes whose title or body contains a text, optionally with a tag.",
            input_schema={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "default": ""},
                    "tag": {"type": "string"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 500, "default": 20},
                },
                "additionalProperties": False,
            },
            concurrency=Concurrency.PARALLEL,
        )(in_thread(search_sync)),
        tool(
            name="notes_delete",
            description="Delete a note by id.",
            input_schema={
                "type": "object",
                "properties": {"id": {"type": "integer", "minimum": 1}},
                "required": ["id"],
                "additionalProperties": False,
            },
            concurrency=Concurrency.EXCLUSIVE,
        )(in_thread(delete_sync)),
    ]
