"""Run in a child process by ``test_refresh_crash``: one turn, a config change, an applied refresh, then SIGKILL.

The refresh persisted its environment record; the model was not told yet (that
happens at the next model step, which never comes). Usage:
``python -m tests.ptc_plus.session.refresh_crash_child WORKSPACE STATE_DIR CONFIG_TEXT``;
prints the session id and the receipt status before it dies.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import ptc_plus.plugin
from hookspecs.reference import AssistantTurn, ReferenceHost, RequestedCall, ScriptedModel
from hookspecs.reference.demo_tools import demo_tool_definitions


async def main(workspace: Path, state_dir: Path, config_text: str) -> None:
    host = ReferenceHost(
        workspace=workspace,
        state_dir=state_dir,
        tools=demo_tool_definitions(workspace),
        plugins=[ptc_plus.plugin],
        load_entry_points=False,
        user_id="u1",
    )
    call = RequestedCall(tool="run_code", arguments={"description": "t", "code": "return 1"})
    session = await host.start_session(
        title="t", model=ScriptedModel([AssistantTurn(tool_calls=(call,)), AssistantTurn(text="done")])
    )
    await session.run_turn("one")
    (workspace / ".ptc-plus" / "config.toml").write_text(config_text, encoding="utf-8")
    receipt = session.command("/capabilities refresh")
    print(session.agent.session_id, receipt.status.value, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]))
