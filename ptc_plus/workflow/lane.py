"""The host's half of a workflow run: the guest's calls become children of the host (ADR 0116).

:class:`ChildLane` is the :class:`~ptc_plus.runtime.Lane` of a workflow
run: the runtime hands it every call of the guest, and it knows only three
tools. ``agent`` starts a child through the host's
:class:`~hookspecs.children.ChildAgents` — after checking the request
again here (the guest is in the program's process, so nothing it checked is
trusted), counting it against the run's total, and waiting for one of the
run's FIFO slots (``max_concurrent_agents``). ``phase`` names the phase.
``fatal`` (or a refused request here) ends the run through ``on_fatal``.

Every child's start and end goes to the :class:`Progress` of the run.
:meth:`ChildLane.reap` — after the run's process is gone, however it ended
— cancels every child not settled yet, awaited by the script or not, and
waits until the host has reaped them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

import attrs
import jsonschema
import orjson

from hookspecs import AgentRef, JSONObject, JSONValue, ResultStatus, ToolResult
from hookspecs.children import ChildAgents, ChildRequest, ChildResult
from ptc_plus.workflow import errors
from ptc_plus.workflow.caps import WorkflowCaps
from ptc_plus.workflow.guest import AGENT, FATAL, PHASE
from ptc_plus.workflow.progress import Progress

ReplyHandler = Callable[[ToolResult], None]
FatalHandler = Callable[[str, dict[str, str]], None]

OPTIONS = {"label": str, "phase": str, "schema": dict, "provider": str, "model": str}
"""The options ``agent`` takes; any other is fatal (effort, isolation, agent types are not offered)."""
MAX_PROMPT_CHARS = 200_000
_log = logging.getLogger(__name__)


@attrs.frozen(kw_only=True)
class Planned:
    """One checked ``agent`` call."""

    request: ChildRequest
    label: str
    phase: str


class ChildLane:
    def __init__(
        self,
        *,
        children: ChildAgents,
        parent: AgentRef,
        run_id: str,
        caps: WorkflowCaps,
        progress: Progress,
        on_fatal: FatalHandler,
    ) -> None:
        self._children = children
        self._parent = parent
        self._run_id = run_id
        self._caps = caps
        self._progress = progress
        self._on_fatal = on_fatal
        # asyncio.Semaphore wakes its waiters in the order they came: the slots are FIFO.
        self._slots = asyncio.Semaphore(caps.max_concurrent_agents)
        self._count = 0
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._providers = frozenset(children.providers())
        self._closed = False

    @property
    def count(self) -> int:
        return self._count

    def submit(self, tool: str, arguments: JSONObject, on_settled: ReplyHandler) -> str:
        self._count += 1
        call_id = f"{self._run_id}:{self._count}"
        loop = asyncio.get_running_loop()
        if self._closed:
            return call_id  # the run is ending: nothing new starts; the reply never comes
        if tool == PHASE:
            self._progress.phase(str(arguments.get("name", ""))[:200])
            loop.call_soon(on_settled, ToolResult(call_id=call_id, tool=tool, status=ResultStatus.OK))
        elif tool == AGENT:
            planned = self._plan(arguments)
            if planned is not None:
                task = loop.create_task(self._child(call_id, planned, on_settled))
                self._tasks[call_id] = task
        elif tool == FATAL:
            code = str(arguments.get("code", ""))
            raw = arguments.get("params")
            params = {str(k): str(v)[:500] for k, v in raw.items()} if isinstance(raw, dict) else {}
            known = {errors.FATAL_OPTION, errors.FATAL_ITEMS, errors.FATAL_CALL}
            self._fatal(code if code in known else errors.FATAL_CALL, params if code in known else {"detail": code})
        return call_id

    def _fatal(self, code: str, params: dict[str, str]) -> None:
        self._closed = True
        self._on_fatal(code, params)

    def _plan(self, arguments: JSONObject) -> Planned | None:
        """The call as a child request, or ``None`` after reporting it fatal.

        The host trusts nothing the guest checked: the guest runs in the program's process.
        """
        prompt, options = arguments.get("prompt"), arguments.get("options")
        if not isinstance(prompt, str) or not isinstance(options, dict):
            self._fatal(errors.FATAL_CALL, {"detail": "agent() takes one positional argument, the prompt text"})
            return None
        if len(prompt) > MAX_PROMPT_CHARS:
            self._fatal(errors.FATAL_CALL, {"detail": f"a prompt of at most {MAX_PROMPT_CHARS} characters"})
            return None
        for name, value in options.items():
            kind = OPTIONS.get(name)
            if kind is None or not isinstance(value, kind):
                self._fatal(errors.FATAL_OPTION, {"option": str(name)[:100]})
                return None
        provider = str(options.get("provider", ""))
        if provider not in self._providers:
            self._fatal(errors.FATAL_PROVIDER, {"provider": provider, "known": ", ".join(sorted(self._providers))})
            return None
        schema = options.get("schema")
        if schema is not None:
            detail = unsupported_schema(schema, structured=self._children.structured(provider))
            if detail is not None:
                self._fatal(errors.FATAL_SCHEMA, {"detail": detail})
                return None
        if self._progress.started >= self._caps.max_total_agents:
            self._fatal(errors.FATAL_AGENTS, {"limit": str(self._caps.max_total_agents)})
            return None
        label = str(options.get("label", ""))[:200]
        request = ChildRequest(
            parent=self._parent,
            prompt=prompt,
            label=label,
            schema=schema if isinstance(schema, dict) else None,
            provider=provider,
            model=str(options.get("model", "")),
            max_steps=self._caps.child_max_steps,
        )
        self._progress.submitted()
        return Planned(request=request, label=label, phase=str(options.get("phase", self._progress.current))[:200])

    async def _child(self, call_id: str, planned: Planned, on_settled: ReplyHandler) -> None:
        started = False
        try:
            async with self._slots:
                started = True
                self._progress.child_started(call_id, planned.label, planned.phase)
                result = await self._children.run(planned.request)
            value = child_value(result, planned.request.schema)
            self._progress.child_ended(call_id, result, ok=value is not None)
            on_settled(ToolResult(call_id=call_id, tool=AGENT, status=ResultStatus.OK, value={"value": value}))
        except asyncio.CancelledError:
            if started:
                self._progress.child_reaped(call_id)
            raise
        except Exception as exc:  # the host's child service itself failed: no ordinary child failure
            _log.warning("workflow child %s: the host's child agents failed", call_id, exc_info=exc)
            self._fatal(errors.FATAL_HOST, {"detail": f"{type(exc).__name__}: {exc}"[:500]})
        finally:
            self._tasks.pop(call_id, None)

    async def cancel(self, grace: float) -> tuple[tuple[str, str], ...]:
        """Cancel every child not settled yet; ``(call id, "agent")`` of those the host did not reap in time."""
        self._closed = True
        live = [(call_id, task) for call_id, task in self._tasks.items() if not task.done()]
        if not live:
            return ()
        for _call_id, task in live:
            task.cancel()
        _done, pending = await asyncio.wait([task for _id, task in live], timeout=grace)
        if pending:
            for task in pending:
                task.cancel()
            _done, pending = await asyncio.wait(pending, timeout=grace)
        return tuple((call_id, AGENT) for call_id, task in live if task in pending)

    async def reap(self, grace: float) -> tuple[str, ...]:
        """The run is over: cancel what is left (un-awaited children too) and wait for the host to reap it.

        Returns the ids of children still not at rest after twice ``grace`` (reported, never faked as reaped).
        """
        return tuple(call_id for call_id, _tool in await self.cancel(grace))


def unsupported_schema(schema: object, *, structured: bool) -> str | None:
    """Why ``schema`` cannot be used for a child's output, or ``None``."""
    if not structured:
        return "the provider cannot be asked for structured output"
    if not isinstance(schema, dict):
        return "a schema is a JSON object"
    default = jsonschema.Draft202012Validator
    validator = jsonschema.validators.validator_for(schema, default=default)
    if "$schema" in schema and validator is default and schema["$schema"] != default.META_SCHEMA["$id"]:
        return f"unsupported $schema {str(schema.get('$schema'))[:200]!r}"
    try:
        validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        return exc.message[:300]
    if _remote_ref(schema):
        return "only local $ref (#...) is supported: a child's schema is one self-contained document"
    return None


def _remote_ref(value: Any) -> bool:
    if isinstance(value, dict):
        refs = [value.get(key) for key in ("$ref", "$dynamicRef") if key in value]
        if any(not (isinstance(ref, str) and ref.startswith("#")) for ref in refs):
            return True
        return any(_remote_ref(v) for v in value.values())
    if isinstance(value, list):
        return any(_remote_ref(v) for v in value)
    return False


def child_value(result: ChildResult, schema: JSONObject | None) -> JSONValue:
    """What ``agent`` gives the script: the text; with a schema the validated object; ``None`` on failure."""
    if not result.ok:
        return None
    if schema is None:
        return result.text
    text = result.text.strip()
    if text.startswith("```"):  # a fenced answer: the fence is presentation, the JSON inside is the value
        text = text.strip("`").removeprefix("json").strip()
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    with contextlib.suppress(jsonschema.ValidationError):
        jsonschema.validate(value, schema)
        return value
    return None
