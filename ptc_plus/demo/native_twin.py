"""The same two questions answered natively, so the demo can say what code mode saved — measured, not claimed.

The native twin runs the demo's native script (``native.jsonl``: several
independent calls in one response, as current models send them) on a fresh
temporary copy of the demo workspace, with no plugin: every tool schema in
every request, every result in the history. What it costs is counted by the
caller's :class:`Bill` (the evaluation's meter, one layer up), over exactly
the requests both sessions sent.
"""

from __future__ import annotations

from typing import Protocol

from hookspecs.reference import Model
from hookspecs.reference.demo_tools import demo_tool_definitions
from ptc_plus.demo.scripted_model import DemoModel
from ptc_plus.demo.workspace import demo_workspace
from ptc_plus.doors import embedded
from ptc_plus.i18n import message

CODE = "code"
"""The style the demo's own session is recorded under."""
NATIVE = "native"
"""The style of the native twin's session."""


class Bill(Protocol):
    """Counts the requests of the demo's sessions and says, in one line, what each cost."""

    def record(self, model: Model, style: str) -> Model:
        """``model`` with every exchange it answers recorded under ``style`` (:data:`CODE`, :data:`NATIVE`)."""

    def closing_line(self) -> str | None:
        """What both styles cost, from what was recorded; ``None`` when there is nothing to compare."""


async def run_native_twin(bill: Bill, user_id: str) -> None:
    """Answer the demo's two questions with native tool calls in a temporary workspace, recorded as :data:`NATIVE`."""
    with demo_workspace(None) as (root, _temporary):
        async with embedded(root, tools=demo_tool_definitions(root), entry_points=False, user=user_id) as host:
            session = await host.start_session(
                title="demo-native", model=bill.record(DemoModel.named("native.jsonl"), NATIVE)
            )
            for question in (message("demo.question"), message("demo.question.units")):
                await session.run_turn(question)
