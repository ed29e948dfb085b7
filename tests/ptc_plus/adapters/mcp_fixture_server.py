"""An MCP server for the tests (run as a script over stdio): typed tools, resources, templates and misbehaviour.

- ``add(a, b)`` and ``describe(word)`` have output schemas (structured results);
- ``rates(country)`` has no output schema and answers JSON text (a learned shape's case, ADR 0102);
- ``fail(reason)`` answers with ``is_error``;
- ``hang()`` never answers; ``block()`` is busy in a blocking sleep; ``die()`` ends the process
  mid-call; ``freeze()`` stops it (SIGSTOP);
- ``grow()`` adds the tool ``late_tool`` and sends ``tools/list_changed``;
- ``pid()`` names its process; resources ``fixture://readme`` and the template ``fixture://notes/{name}``.

A second argument after the mark replaces the server's instructions (a server whose declaration changed).

``FIXTURE_MARK`` in the environment is echoed by ``pid()`` so tests can find their own processes;
``FIXTURE_PREFIX`` is put before every tool's name (several fixture servers in one session).
``FIXTURE_STARTS`` names a file the server appends one line (its pid) to as it starts: a test counts starts.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

PREFIX = os.environ.get("FIXTURE_PREFIX", "")

server = MCPServer(
    "fixture", instructions=sys.argv[2] if len(sys.argv) > 2 else "Fixture server: numbers are integers."
)


class Sum(BaseModel):
    total: int


class Described(BaseModel):
    word: str
    length: int


@server.tool(name=PREFIX + "add", description="Add two integers.")
def add(a: int, b: int) -> Sum:
    return Sum(total=a + b)


@server.tool(name=PREFIX + "describe", description="Describe a word.")
def describe(word: str) -> Described:
    return Described(word=word, length=len(word))


@server.tool(name=PREFIX + "rates", description="A country's VAT rates.", structured_output=False)
def rates(country: str) -> str:
    reduced = {"FR": [5.5, 10.0], "DE": [7.0]}.get(country, [])
    return json.dumps({"country": country, "standard_rate": 20.0 if country == "FR" else 19, "reduced": reduced})


@server.tool(name=PREFIX + "fail", description="Always fails.")
def fail(reason: str) -> str:
    raise ValueError(f"refused: {reason}")


@server.tool(name=PREFIX + "hang", description="Never answers.")
async def hang() -> str:
    await asyncio.sleep(3600)
    return "late"


@server.tool(name=PREFIX + "block", description="Busy: blocks in a synchronous sleep for an hour.")
def block() -> str:
    time.sleep(3600)
    return "late"


@server.tool(name=PREFIX + "die", description="Ends the server process mid-call.")
def die() -> str:
    os._exit(3)


@server.tool(
    name=PREFIX + "freeze",
    description="Stops the server process (SIGSTOP): it reads nothing more, not even end of input.",
)
def freeze() -> str:
    os.kill(os.getpid(), signal.SIGSTOP)
    return "thawed"


@server.tool(name=PREFIX + "pid", description="The server's process id.")
def pid() -> dict[str, object]:
    return {"pid": os.getpid(), "mark": os.environ.get("FIXTURE_MARK", ""), "cwd": os.getcwd()}


@server.tool(name=PREFIX + "grow", description="Add a tool and tell the client.")
async def grow(ctx: Context) -> str:
    @server.tool(description="Added later.")
    def late_tool() -> str:
        return "late"

    await ctx.session.send_tool_list_changed()
    return "grown"


@server.resource("fixture://readme", description="The fixture's readme.")
def readme() -> str:
    return "hello from the fixture"


@server.resource("fixture://notes/{name}", description="A note by name.")
def note(name: str) -> str:
    return f"note {name}"


if __name__ == "__main__":
    if starts := os.environ.get("FIXTURE_STARTS"):
        with open(starts, "a", encoding="utf-8") as record:
            record.write(f"{os.getpid()}\n")
    server.run("stdio")
