"""The table of session states one controller holds, and the ``run_code`` cells each session runs now.

Every seam of the controller (:mod:`.opener`, :mod:`.deliverer`, :mod:`.guarding`,
:mod:`.toolbox`, :mod:`.usage`, :mod:`.commands`) reads and replaces a session's
:class:`~.state.SessionState` here and nowhere else (ADR 0112). A state is a frozen
value: replacing it is the only change. Parents are found through
``AgentRef.parent_session_id``, among the sessions this table holds.
"""

from __future__ import annotations

from hookspecs import AgentRef, ToolCall
from ptc_plus.runtime import TOOL_NAME
from ptc_plus.session.state import SessionState


class SessionTable:
    """Session id -> its state, and session id -> the ids of its top-level ``run_code`` calls running now."""

    def __init__(self) -> None:
        self._states: dict[str, SessionState] = {}
        self._cells: dict[str, set[str]] = {}

    def get(self, agent: AgentRef) -> SessionState | None:
        return self._states.get(agent.session_id)

    def coded(self, agent: AgentRef) -> SessionState | None:
        """``agent``'s state when code mode is in force for it (with its membership), else ``None``."""
        state = self._states.get(agent.session_id)
        return state if state is not None and state.ptc and state.membership is not None else None

    def put(self, state: SessionState) -> SessionState:
        """Hold ``state`` as its session's state now (and return it)."""
        self._states[state.info.agent.session_id] = state
        return state

    def holds(self, session_id: str) -> bool:
        return session_id in self._states

    def children(self, session_id: str) -> int:
        """How many held sessions have ``session_id`` as their parent."""
        return sum(1 for s in self._states.values() if s.info.agent.parent_session_id == session_id)

    def parent_members(self, agent: AgentRef) -> frozenset[str] | None:
        """The parent's effective identities (``None``: no parent, or one without code mode).

        The child's plan never gains what the parent's plan lacks.
        """
        parent = self._states.get(agent.parent_session_id) if agent.parent_session_id else None
        if parent is None or not parent.ptc or parent.environment is None:
            return None
        return frozenset(e.identity for e in parent.environment.plan.effective())

    def parent_refuses(self, state: SessionState, name: str) -> bool:
        """Whether an ancestor's plan now keeps ``name`` out: a child's plan stays bounded by its
        parent's after the parent refreshed, without re-planning the child."""
        parent_id = state.info.agent.parent_session_id
        seen: set[str] = set()
        while parent_id is not None and parent_id not in seen:
            seen.add(parent_id)
            parent = self._states.get(parent_id)
            if parent is None:
                return False
            membership = parent.membership if parent.ptc else None
            if membership is not None and name in membership.known and not membership.reaches(name):
                return True
            parent_id = parent.info.agent.parent_session_id
        return False

    # -- cells: a refresh waits for a session's running programs (ADR 0068) ----------------------
    def cell_started(self, call: ToolCall) -> None:
        """A top-level ``run_code`` call starts: a running cell until :meth:`cell_ended`."""
        if call.tool == TOOL_NAME and call.parent_call_id is None:
            self._cells.setdefault(call.caller.session_id, set()).add(call.call_id)

    def cell_ended(self, call: ToolCall) -> bool:
        """``call`` returned or raised; whether it was the session's last running cell."""
        cells = self._cells.get(call.caller.session_id)
        if cells is None or call.call_id not in cells:
            return False
        cells.discard(call.call_id)
        return not cells

    def running(self, session_id: str) -> int:
        """How many ``run_code`` cells of the session run now."""
        return len(self._cells.get(session_id, ()))
