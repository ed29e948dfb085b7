"""The reference host's child agents (:class:`hookspecs.children.ChildAgents`, ADR 0116).

Each child is a fork of the caller's session (same family, a view no wider
than the parent's) with a fresh surface: its model sees the host's system
prompt for it and the request's prompt, nothing of the parent's
conversation. Its model comes from the provider the request names. After its one turn —
however it ends, cancellation included — the child is at rest: no turn of
it runs, its calls are settled (the host's dispatch awaits cancelled bodies),
and :meth:`ReferenceChildAgents.live` no longer counts it. Its session stays
loaded like any fork's, so the family's settlement can write to its log.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from hookspecs.children import ChildRequest, ChildResult
from hookspecs.i18n import message
from hookspecs.reference.errors import HostError
from hookspecs.reference.model import Model

if TYPE_CHECKING:
    from hookspecs.reference.host import ReferenceHost


@attrs.frozen(kw_only=True)
class ChildProvider:
    """A route family children may use: ``make`` builds the model for one child's request."""

    make: Callable[[ChildRequest], Model] = attrs.field(eq=False)
    structured: bool = True
    """Whether its models can be asked for JSON following a schema."""


class ReferenceChildAgents:
    """Runs children as forks of the calling session (see the module docstring)."""

    def __init__(self, host: ReferenceHost, providers: Mapping[str, ChildProvider]) -> None:
        self._host = host
        self._providers = dict(providers)
        self.started = 0
        """Children started by this host so far (for tests and benchmarks)."""
        self._live: set[str] = set()

    def providers(self) -> Sequence[str]:
        return sorted(self._providers)

    def structured(self, provider: str) -> bool:
        found = self._providers.get(provider)
        return found is not None and found.structured

    def live(self) -> int:
        """Children whose turn has not ended yet (0 once every child is reaped)."""
        return len(self._live)

    async def run(self, request: ChildRequest) -> ChildResult:
        provider = self._providers[request.provider]  # KeyError: nothing started
        parent = self._host.session(request.parent.session_id)
        child = await self._host.fork_session(parent, title=request.label)
        self.started += 1
        sid = child.agent.session_id
        self._live.add(sid)
        try:
            child.model = provider.make(request)
            child.max_steps = request.max_steps
            prompt = request.prompt
            if request.schema is not None:
                schema = json.dumps(request.schema, ensure_ascii=False, sort_keys=True)
                prompt = f"{prompt}\n\n{message('host.child-schema', schema=schema)}"
            usage = getattr(child.model, "usage", None)
            before = len(usage) if isinstance(usage, list) else 0
            route = str(getattr(child.model, "route", ""))
            try:
                summary = await child.run_turn(prompt)
            except HostError as exc:  # the child's model or turn failed: an ordinary failure
                spent = _usage(usage, before)
                return ChildResult(ok=False, session_id=sid, error=str(exc), steps=child.turn, route=route, **spent)
            spent = _usage(usage, before)
            return ChildResult(
                ok=True, session_id=sid, text=summary.final_text, steps=summary.steps, route=route, **spent
            )
        finally:
            # However the turn ended (cancellation too): its calls are settled, the child is at rest.
            self._live.discard(sid)


def _usage(usage: object, before: int) -> dict[str, Any]:
    """The child's counts (contract 1.6) from its model's ``usage`` list since ``before``: a split is known only
    when every request reported it (a sum with an unknown part is no sum)."""
    tokens = _spent(usage, before)
    found = usage[before:] if isinstance(usage, list) else []

    def total(name: str) -> int | None:
        counts = [c for u in found if isinstance(c := getattr(u, name, None), int)]
        return sum(counts) if found and len(counts) == len(found) else None

    return {
        "tokens": tokens,
        "input_tokens": total("input"),
        "cached_input_tokens": total("cached_input"),
        "output_tokens": total("output"),
    }


def _spent(usage: object, before: int) -> int:
    """Tokens of the requests a model's ``usage`` list (:class:`~hookspecs.reference.RequestUsage`) gained since
    ``before``: input plus output where reported. Children sharing one model one at a time are counted
    exactly; concurrent ones sharing it may count each other's requests."""
    if not isinstance(usage, list):
        return 0
    return sum((getattr(u, "input", None) or 0) + (getattr(u, "output", None) or 0) for u in usage[before:])
