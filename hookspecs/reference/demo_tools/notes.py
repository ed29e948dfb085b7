"""A small notes store in SQLite: add and delete are exclusive, search and list are parallel."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hookspecs.services import ToolContext, ToolDefinition, ToolFailure
from hookspecs.types import Concurrency, JSONObject, JSONValue, ToolSpec

_SCHEMA = """
CREATE TABLE IF NOT EXISTS notes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT ''
)
"""


def _connect(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute(_SCHEMA)
    return conn


def _row(row: tuple[int, str, str, str]) -> JSONValue:
    return {"id": row[0], "title": row[1], "body": row[2], "tags": [t for t in row[3].split(",") if t]}


def note_tools(db: Path) -> list[ToolDefinition]:
    async def notes_add(args: JSONObject, ctx: ToolContext) -> JSONValue:
        tags = ",".join(sorted({str(t).strip() for t in args.get("tags", []) if str(t).strip()}))
        with _connect(db) as conn:
            cur = conn.execute(
                "INSERT INTO notes (title, body, tags) VALUES (?, ?, ?)", (args["title"], args["body"], tags)
            )
        return {"id": cur.lastrowid}

    async def notes_search(args: JSONObject, ctx: ToolContext) -> JSONValue:
        like = f"%{args.get('query', '')}%"
        sql = "SELECT id, title, body, tags FROM notes WHERE (title LIKE ? OR body LIKE ?)"
        params: list[object] = [like, like]
        if args.get("tag"):
            sql += " AND (',' || tags || ',') LIKE ?"
            params.append(f"%,{args['tag']},%")
        sql += " ORDER BY id LIMIT ?"
        params.append(int(args.get("limit", 20)))
        with _connect(db) as conn:
            return {"notes": [_row(r) for r in conn.execute(sql, params)]}

    async def notes_delete(args: JSONObject, ctx: ToolContext) -> JSONValue:
        with _connect(db) as conn:
            cur = conn.execute("DELETE FROM notes WHERE id = ?", (int(args["id"]),))
        if cur.rowcount == 0:
            raise ToolFailure("not-found", f"no note with id {args['id']}")
        return {"deleted": int(args["id"])}

    return [
        ToolDefinition(
            spec=ToolSpec(
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
            ),
            handler=notes_add,
        ),
        ToolDefinition(
            spec=ToolSpec(
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
            ),
            handler=notes_search,
        ),
        ToolDefinition(
            spec=ToolSpec(
                name="notes_delete",
                description="Delete a note by id.",
                input_schema={
                    "type": "object",
                    "properties": {"id": {"type": "integer", "minimum": 1}},
                    "required": ["id"],
                    "additionalProperties": False,
                },
                concurrency=Concurrency.EXCLUSIVE,
            ),
            handler=notes_delete,
        ),
    ]
