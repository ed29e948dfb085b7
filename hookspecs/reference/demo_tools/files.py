"""Workspace file tools: list, read, search (parallel) and write (exclusive), confined to the workspace."""

from __future__ import annotations

import fnmatch
import os
import tempfile
from pathlib import Path

from hookspecs.services import ToolContext, ToolDefinition, ToolFailure
from hookspecs.types import Concurrency, JSONObject, JSONValue, ToolSpec

_SKIP_DIRS = {".git", ".agent-host", ".demo", ".ptc-plus", "__pycache__", ".venv"}


def _inside(root: Path, relative: str) -> Path:
    target = (root / relative).resolve()
    if target != root and root not in target.parents:
        raise ToolFailure("outside-workspace", f"{relative!r} is outside the workspace")
    return target


def _walk(root: Path, base: Path) -> list[Path]:
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in sorted(filenames):
            path = Path(dirpath) / name
            # A symlink leading out of the workspace is not listed or searched (read_file refuses it too).
            if root in path.resolve().parents:
                found.append(path)
    return found


def file_tools(root: Path) -> list[ToolDefinition]:
    async def list_files(args: JSONObject, ctx: ToolContext) -> JSONValue:
        base = _inside(root, str(args.get("path", ".")))
        if not base.is_dir():
            raise ToolFailure("not-a-directory", f"{args.get('path', '.')!r} is not a directory")
        pattern = str(args.get("pattern", "*"))
        limit = int(args.get("max_entries", 200))
        files = [p for p in _walk(root, base) if fnmatch.fnmatch(p.name, pattern)]
        entries = [{"path": str(p.relative_to(root)), "bytes": p.stat().st_size} for p in files[:limit]]
        return {"entries": entries, "truncated": len(files) > limit}

    async def read_file(args: JSONObject, ctx: ToolContext) -> JSONValue:
        target = _inside(root, str(args["path"]))
        if not target.is_file():
            raise ToolFailure("not-found", f"no file {args['path']!r}")
        lines = target.read_text(encoding="utf-8", errors="replace").splitlines()
        offset, limit = int(args.get("offset", 0)), int(args.get("limit", 400))
        return {"path": str(args["path"]), "lines": lines[offset : offset + limit], "total_lines": len(lines)}

    async def search_files(args: JSONObject, ctx: ToolContext) -> JSONValue:
        query = str(args["query"])
        sensitive = bool(args.get("case_sensitive", False))
        needle = query if sensitive else query.lower()
        glob = str(args.get("glob", "*"))
        limit = int(args.get("max_results", 50))
        matches: list[JSONValue] = []
        for path in _walk(root, root):
            if not fnmatch.fnmatch(path.name, glob):
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            for number, line in enumerate(text.splitlines(), start=1):
                if needle in (line if sensitive else line.lower()):
                    matches.append({"path": str(path.relative_to(root)), "line": number, "text": line.strip()[:200]})
                    if len(matches) >= limit:
                        return {"matches": matches, "truncated": True}
        return {"matches": matches, "truncated": False}

    async def write_file(args: JSONObject, ctx: ToolContext) -> JSONValue:
        target = _inside(root, str(args["path"]))
        target.parent.mkdir(parents=True, exist_ok=True)
        data = str(args["content"]).encode("utf-8")
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
        return {"path": str(args["path"]), "bytes": len(data)}

    path_prop = {"type": "string", "description": "Path relative to the workspace root."}
    return [
        ToolDefinition(
            spec=ToolSpec(
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
            ),
            handler=list_files,
        ),
        ToolDefinition(
            spec=ToolSpec(
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
            ),
            handler=read_file,
        ),
        ToolDefinition(
            spec=ToolSpec(
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
            ),
            handler=search_files,
        ),
        ToolDefinition(
            spec=ToolSpec(
                name="write_file",
                description="Create or replace a text file in the workspace (atomic replace).",
                input_schema={
                    "type": "object",
                    "properties": {"path": path_prop, "content": {"type": "string"}},
                    "required": ["path", "content"],
                    "additionalProperties": False,
                },
                concurrency=Concurrency.EXCLUSIVE,
            ),
            handler=write_file,
        ),
    ]
