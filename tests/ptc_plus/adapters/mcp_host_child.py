"""A host for the SIGKILL tests: its session's MCP servers start, calls are left open; it says ``ready``, waits.

Usage: python host_child.py WORKSPACE STATE_DIR [PREFIX:TOOL ...] (``XDG_CONFIG_HOME`` names the servers).
For each ``PREFIX:TOOL`` (default ``:freeze``) the server whose tools carry ``PREFIX`` answers
``<PREFIX>pid`` first, then gets the call ``<PREFIX><TOOL>``, which stays open (``freeze``, ``hang``,
``block``).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import ptc_plus.plugin
from hookspecs.reference import AssistantTurn, ReferenceHost, ScriptedModel


async def main(workspace: Path, state_dir: Path, calls: list[str]) -> None:
    host = ReferenceHost(
        workspace=workspace, state_dir=state_dir, plugins=[ptc_plus.plugin], load_entry_points=False, user_id="u"
    )
    session = await host.start_session(title="t", model=ScriptedModel([AssistantTurn(text="hi")]))
    pids, open_calls = [], []
    for call in calls:
        prefix, tool = call.split(":", 1)
        result = await session.call_tool(prefix + "pid", {})
        assert result.error is None, result.error
        pids.append(result.value["pid"])
        # A stopped or busy server never acts on its input closing: only a kill from outside can end it.
        open_calls.append(asyncio.create_task(session.call_tool(prefix + tool, {})))
    await asyncio.sleep(0.5)
    print("ready", *pids, any(c.done() for c in open_calls), flush=True)
    await asyncio.sleep(3600)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:] or [":freeze"]))
