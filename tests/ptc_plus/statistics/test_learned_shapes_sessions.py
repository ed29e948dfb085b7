"""Eight real sessions in eight processes learning the same tool at once end with one merged shape (ADR 0102).

Each process runs a reference host with the plugin and one tool without an output schema (``lookup``); its
session's program calls it, and the family settles into the one workspace store while the others do the same.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ptc_plus.statistics import derive_shape, merge_shapes, workspace_store
from tests.scaffolding import clean_environment

ROOT = Path(__file__).resolve().parents[3]

SESSION = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    import ptc_plus.plugin
    from hookspecs import JSONObject, JSONValue, ToolContext, tool
    from hookspecs.reference import AssistantTurn, ReferenceHost, RequestedCall, ScriptedModel

    workspace, worker = Path(sys.argv[1]), int(sys.argv[2])

    @tool("lookup", description="Look a thing up.", input_schema={"type": "object"})
    async def lookup(arguments: JSONObject, context: ToolContext) -> JSONValue:
        return {"common": worker, "only_" + "abcdefgh"[worker]: [True], "note": None if worker % 2 else "x"}

    async def main() -> None:
        host = ReferenceHost(workspace=workspace, state_dir=Path(sys.argv[3]), tools=[lookup],
                             plugins=[ptc_plus.plugin], load_entry_points=False)
        call = RequestedCall(tool="run_code", arguments={"description": "t", "code": "return await tools.lookup()"})
        session = await host.start_session(model=ScriptedModel([AssistantTurn(tool_calls=(call,)),
                                                                 AssistantTurn(text="done")]))
        sys.stdin.readline()  # run the turns together
        await session.run_turn("go")
        await host.aclose()

    asyncio.run(main())
    """
)


def value(worker: int) -> dict[str, object]:
    return {"common": worker, "only_" + "abcdefgh"[worker]: [True], "note": None if worker % 2 else "x"}


@pytest.mark.slow  # eight hosts start at once: about two minutes on the shared 2-core machine
def test_eight_sessions_in_eight_processes_end_with_one_merged_shape(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / ".ptc-plus").mkdir(parents=True)
    (workspace / ".ptc-plus" / "config.toml").write_text(
        'version = 1\n\n[runtime]\npolicy = "danger-full-access"\n\n[management]\nenabled = true\n', "utf-8"
    )
    env = clean_environment(tmp_path)
    children = [
        subprocess.Popen(
            [sys.executable, "-c", SESSION, str(workspace), str(worker), str(tmp_path / f"state{worker}")],
            stdin=subprocess.PIPE,
            cwd=ROOT,
            env=env,
        )
        for worker in range(8)
    ]
    for child in children:
        assert child.stdin is not None
        child.stdin.write(b"go\n")
        child.stdin.flush()
        child.stdin.close()
    for child in children:
        assert child.wait(timeout=900) == 0
    view = workspace_store(workspace).read()
    assert view.status == "ok" and view.families() == 8
    (found,) = view.all_learned()
    assert found.identity == "host:lookup" and found.results == 8
    expected = None
    for worker in range(8):
        expected = merge_shapes(expected, derive_shape(value(worker)))
    assert found.shape == expected
    assert found.shape["required"] == ["common", "note"]  # type: ignore[index]
