"""The reference host: plugin loading, sessions, tool views and the services it lends to plugins."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from hookspecs.reference.builtin import Approver, HostBuiltins
from hookspecs.reference.children import ChildProvider, ReferenceChildAgents
from hookspecs.reference.dispatch import Dispatcher
from hookspecs.reference.errors import HostError
from hookspecs.reference.facade import HookFacade
from hookspecs.reference.family import Families
from hookspecs.reference.loading import build_plugin_manager
from hookspecs.reference.model import Model
from hookspecs.reference.registry import ToolView
from hookspecs.reference.services import ReferenceServices
from hookspecs.reference.session import Session
from hookspecs.reference.session_log import SessionLog
from hookspecs.reference.skills import LOAD_SKILL, Skill, load_skill_tool, load_skills
from hookspecs.reference.spill import DEFAULT_MAX_BYTES, FileSpillStore
from hookspecs.serialization import structure, unstructure
from hookspecs.services import TokenCounter, ToolDefinition
from hookspecs.types import AgentRef, CommandSpec, SessionInfo, SkillSpec


class ReferenceHost:
    """A small, real agent host implementing the whole contract.

    Use as ``async with ReferenceHost(...) as host``. Sessions persist under
    ``state_dir/sessions/<id>.jsonl``; spilled text under ``state_dir/spill``, at most
    ``spill_max_bytes`` of it (``None``: the host has no spill store), pinned by the sessions
    whose surface shows it and swept at shutdown when no session does (ADR 0069).
    With ``child_providers`` the host lends child agents (:attr:`children`, ADR 0116): each
    provider name (``""`` is the default one) makes the model of a child.
    When a family's last turn or direct call in this host ends, :attr:`families`
    settles it (contract 1.2, ADR 0065).
    """

    def __init__(
        self,
        *,
        workspace: Path,
        state_dir: Path | None = None,
        tools: Sequence[ToolDefinition] = (),
        plugins: Sequence[object] = (),
        load_entry_points: bool = True,
        max_parallel: int = 8,
        max_steps: int = 32,
        skills_dirs: Sequence[Path] = (),
        approver: Approver | None = None,
        token_counter: TokenCounter | None = None,
        user_id: str = "",
        skill_loader: str = LOAD_SKILL,
        spill_max_bytes: int | None = DEFAULT_MAX_BYTES,
        child_providers: Mapping[str, ChildProvider] | None = None,
    ) -> None:
        self.workspace = Path(workspace).resolve()
        self.state_dir = Path(state_dir).resolve() if state_dir else self.workspace / ".agent-host"
        self.max_steps = max_steps
        self._skills_dirs, self._skill_loader = tuple(skills_dirs), skill_loader
        self._skills: list[Skill] = load_skills(skills_dirs, loader=skill_loader)
        host_tools = list(tools) + ([load_skill_tool(self._skills, skill_loader)] if self._skills else [])
        self._host_tools = ToolView(host_tools)
        self.spill = (
            FileSpillStore(self.state_dir / "spill", max_bytes=spill_max_bytes) if spill_max_bytes is not None else None
        )
        self.services = ReferenceServices(self, user_id=user_id, token_counter=token_counter, spill_store=self.spill)
        # Lent only when the host was given providers: a host without them has no child agents (ADR 0116).
        self.children = ReferenceChildAgents(self, child_providers) if child_providers is not None else None
        self.services.child_agents = self.children
        pm = build_plugin_manager(
            [("agent-host-builtins", HostBuiltins(self, approver))],
            [(_plugin_name(p), p) for p in plugins],
            load_entry_points=load_entry_points,
        )
        self.facade = HookFacade(pm)
        self.dispatcher = Dispatcher(
            self.facade,
            self.services,
            view_for=self.view,
            sink_for=lambda agent: self.session(agent.session_id),
            turn_for=lambda agent: self.session(agent.session_id).turn,
            max_parallel=max_parallel,
        )
        self._sessions: dict[str, Session] = {}
        self._views: dict[str, ToolView] = {}
        self._closed = False
        self.families = Families(self)

    async def __aenter__(self) -> ReferenceHost:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    @property
    def closed(self) -> bool:
        """Whether shutdown began (no seam is called any more)."""
        return self._closed

    async def aclose(self) -> None:
        """Shut plugins down (they abort and await live work), then close every session log."""
        if self._closed:
            return
        self._closed = True
        await self.facade.shutdown(self.services)
        self.services.drop_plugin_state()
        for session in self._sessions.values():
            session.close()
        if self.spill is not None:
            with contextlib.suppress(OSError):
                self.spill.sweep()  # what no session shows any more (ADR 0069)

    # -- views ------------------------------------------------------------------------
    def view(self, agent: AgentRef) -> ToolView:
        """The agent's current tools: host tools, then plugin tools, narrowed by the agent's scope."""
        cached = self._views.get(agent.session_id)
        if cached is None:
            scope = self.session(agent.session_id).scope
            plugin_tools = self.facade.tools(agent, self.services)
            every = [*self._host_tools, *plugin_tools]
            cached = ToolView(d for d in every if scope is None or d.spec.name in scope)
            self._views[agent.session_id] = cached
        return cached

    def invalidate_views(self, agent: AgentRef | None = None) -> None:
        """Forget cached views of ``agent`` (default: every agent); the next use rebuilds them."""
        if agent is None:
            self._views.clear()
        else:
            self._views.pop(agent.session_id, None)

    def add_tool(self, definition: ToolDefinition) -> None:
        self._host_tools = ToolView([*self._host_tools, definition])
        self.invalidate_views()

    def remove_tool(self, name: str) -> None:
        self._host_tools = ToolView(d for d in self._host_tools if d.spec.name != name)
        self.invalidate_views()

    def reload_skills(self) -> None:
        """Read the skills folders again (a skill installed, edited or removed while sessions run).

        Sessions see the new skills from their next look (their plans take them in at a refresh); the
        loader tool keeps its place among the host's tools.
        """
        self._skills = load_skills(self._skills_dirs, loader=self._skill_loader)
        loader = load_skill_tool(self._skills, self._skill_loader)
        tools = [d for d in self._host_tools if d.spec.name != self._skill_loader]
        at = next((i for i, d in enumerate(self._host_tools) if d.spec.name == self._skill_loader), len(tools))
        self._host_tools = ToolView([*tools[:at], loader, *tools[at:]] if self._skills else tools)
        self.invalidate_views()

    def host_tool_names(self) -> list[str]:
        """Names of the host's own tools (without plugins' tools, before any agent's scope)."""
        return self._host_tools.names()

    def skill_specs(self) -> list[SkillSpec]:
        return [s.spec for s in self._skills]

    def command_table(self) -> list[CommandSpec]:
        return self.facade.commands()

    # -- sessions ----------------------------------------------------------------------
    def session(self, session_id: str) -> Session:
        try:
            return self._sessions[session_id]
        except KeyError:
            raise HostError("HOST-0307", session=session_id) from None

    def loaded(self, session_id: str) -> Session | None:
        """The session if this host has it open (started, forked or resumed here), else ``None``."""
        return self._sessions.get(session_id)

    def log_path(self, session_id: str) -> Path:
        return self.state_dir / "sessions" / f"{session_id}.jsonl"

    def _new_session(
        self, info: SessionInfo, scope: frozenset[str] | None, model: Model | None, *, log: SessionLog | None = None
    ) -> Session:
        log = log or SessionLog.open(self.log_path(info.agent.session_id), create=True)
        session = Session(self, info, log, scope)
        session.model = model
        self._sessions[info.agent.session_id] = session
        return session

    def _start_event(self, session: Session) -> None:
        session.append(
            "session-started",
            {"info": unstructure(session.info), "scope": None if session.scope is None else sorted(session.scope)},
            durable=True,
        )

    async def start_session(
        self, *, user_id: str | None = None, title: str = "", model: Model | None = None, session_id: str | None = None
    ) -> Session:
        """Start a root session: persist its start event, then run ``agent_host_session_start``."""
        sid = session_id or f"s-{uuid.uuid4().hex[:12]}"
        info = SessionInfo(
            agent=AgentRef(session_id=sid, agent_id=sid, family_id=sid),
            workspace=self.workspace,
            user_id=self.services.user_id if user_id is None else user_id,
            title=title,
            model_route=model.route if model is not None else "",
        )
        session = self._new_session(info, None, model)
        self._start_event(session)
        self.facade.session_start(info, self.services)
        self.invalidate_views()  # plugins may contribute tools once they know the session
        return session

    async def fork_session(
        self, parent: Session, *, title: str = "", tools: list[str] | None = None, workspace: Path | None = None
    ) -> Session:
        """A child agent: same family, a view never wider than the parent's.

        ``workspace`` (default: the parent's) is where the child works; it stays in its parent's family.
        The child is not live until it is given work (a turn or a call).
        """
        parent_names = set(self.view(parent.agent).names())
        if tools is not None and (missing := sorted(set(tools) - parent_names)):
            raise HostError("HOST-0304", names=", ".join(missing))
        scope = frozenset(parent_names if tools is None else tools)
        sid = f"s-{uuid.uuid4().hex[:12]}"
        info = SessionInfo(
            agent=AgentRef(
                session_id=sid,
                agent_id=sid,
                family_id=parent.agent.family_id,
                parent_session_id=parent.agent.session_id,
            ),
            workspace=parent.info.workspace if workspace is None else Path(workspace).resolve(),
            user_id=parent.info.user_id,
            title=title,
            model_route=parent.info.model_route,
        )
        child = self._new_session(info, scope, parent.model)
        self._start_event(child)
        parent.append("child-forked", {"child_session_id": sid}, durable=True)
        self.facade.agent_fork(parent.info, info, self.services)
        self.facade.session_start(info, self.services)
        self.invalidate_views()
        return child

    async def resume_session(self, session_id: str, *, model: Model | None = None) -> Session:
        """Reopen a persisted session: replay its log (reporting a torn tail), then call the resume hook."""
        path = self.log_path(session_id)
        log = SessionLog.open(path, create=False)
        if not log.events or log.events[0].type != "session-started":
            log.close()
            raise HostError("HOST-0306", path=str(path))
        start: dict[str, Any] = log.events[0].data
        info = structure(start["info"], SessionInfo)
        scope = None if start["scope"] is None else frozenset(start["scope"])
        session = self._new_session(info, scope, model, log=log)
        for event in log.events:
            session.apply(event)
        if log.torn is not None:
            session.diagnostics.append(log.torn.describe())
        self.facade.session_resume(info, self.services)
        self.invalidate_views()
        return session


def _plugin_name(plugin: object) -> str:
    """A module's name, else its class name made unique per instance (two instances may be loaded)."""
    name = getattr(plugin, "__name__", None)
    return name if isinstance(name, str) else f"{type(plugin).__name__}-{id(plugin):x}"
