"""A host process for the SIGKILL test: its session's MCP server starts and is frozen; it says ``ready`` and waits.

Usage: python host_child.py WORKSPACE STATE_DIR (``XDG_CONFIG_HOME`` names the servers).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import ptc_plus.plugin
from hookspecs.reference import AssistantTurn, ReferenceHost, ScriptedModel


async def main(workspace: Path, state_dir: Path) -> None:
    host = ReferenceHost(
        workspace=workspace, state_dir=state_dir, plugins=[ptc_plus.plugin], load_entry_points=False, user_id="u"
    )
    session = await host.start_session(title="t", model=ScriptedModel([AssistantTurn(text="hi")]))
    result = await session.call_tool("pid", {})
    # A stopped server never sees its input close: only the kernel's parent-death signal can end it.
    frozen = asyncio.create_task(session.call_tool("freeze", {}))
    await asyncio.sleep(0.5)
    print("ready", result.value, frozen.done(), flush=True)
    await asyncio.sleep(3600)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), Path(sys.argv[2])))
