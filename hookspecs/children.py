"""Child agents a host lends to plugins (contract 1.5 addition, ADR 0116; 1.6 adds a child's usage, ADR 0125).

A host that can run an agent on its own — a fresh session in the caller's
family, given one prompt, answering with its final text — lends that as a
:class:`ChildAgents` service: the attribute ``child_agents`` of its
:class:`~hookspecs.services.HostServices`. It is optional: a host without it
(every host of contract 1.4 or older) has no such attribute or sets it to
``None``, and a plugin must then offer nothing that needs it (PTC Plus offers
neither ``run_workflow`` nor ``ralph`` and says why in ``/capabilities``).
Read it with :func:`child_agents_of`, never by assuming the attribute.

What the host promises for every child it starts:

- **no inherited context**: the child's model sees the request's prompt and
  the host's own system prompt for the child, never the parent's
  conversation nor an earlier child's session;
- **the host's guards**: the child's tool calls go through the host's
  validation, guards, approval and ``tool-execute`` seam like any agent's,
  with a view never wider than the parent's;
- **the family**: the child is a member of the parent's session family
  (``AgentRef.family_id``, ``parent_session_id`` set), so its lineage and
  settlement are the host's as for any fork;
- **its own caps**: ``max_steps`` bounds the child's model steps;
- **reaping**: cancelling :meth:`ChildAgents.run` cancels the child's turn
  and returns (raising ``CancelledError``) only once the child is at rest —
  no turn, model request, tool body or process of it left running.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import attrs

from hookspecs.types import AgentRef, JSONObject


@attrs.frozen(kw_only=True)
class ChildRequest:
    """One child agent to start.

    :ivar parent: The agent on whose behalf the child runs (its family, its view's ceiling).
    :ivar prompt: The child's only input: its first (and only) user message.
    :ivar label: A short human name for progress displays and the child session's title.
    :ivar schema: A JSON Schema the child's final text should satisfy as JSON; the host tells the
        child's model so (the caller still validates). ``None``: free text.
    :ivar provider: The host's name of the route family to use (``""``: the host's default provider).
    :ivar model: A model name within the provider (``""``: the provider's default).
    :ivar max_steps: The child's model steps at most (its turn fails beyond).
    """

    parent: AgentRef
    prompt: str
    label: str = ""
    schema: JSONObject | None = None
    provider: str = ""
    model: str = ""
    max_steps: int = 32


@attrs.frozen(kw_only=True)
class ChildResult:
    """How a child ended. ``ok`` false is an *ordinary* failure (its model or turn failed).

    :ivar session_id: The child's session id (its log is the host's record of it).
    :ivar text: The child's final text (``""`` when it failed).
    :ivar error: Why it failed, for people (``""`` when ok).
    :ivar steps: Model steps the child took.
    :ivar tokens: Tokens the child's model route reported spending (0 when it reports none).
    :ivar route: The model route the child ran on, as the host names it (``provider:model``, for example
        ``openai:gpt-4o-mini``; ``""``: not reported). Contract 1.6: what a plugin's price sheet is keyed by.
    :ivar input_tokens: Prompt tokens of all the child's requests (``None``: a request reported none).
    :ivar cached_input_tokens: The part of ``input_tokens`` served from the route's cache (``None``: unknown).
    :ivar output_tokens: Completion tokens of all the child's requests (``None``: a request reported none).
    """

    ok: bool
    session_id: str
    text: str = ""
    error: str = ""
    steps: int = 0
    tokens: int = 0
    route: str = ""
    input_tokens: int | None = None
    cached_input_tokens: int | None = None
    output_tokens: int | None = None


@runtime_checkable
class ChildAgents(Protocol):
    """The host's child-agent service (see the module docstring for what every child is promised)."""

    def providers(self) -> Sequence[str]:
        """Provider names :meth:`run` accepts, the default provider ``""`` included when the host has one."""

    def structured(self, provider: str) -> bool:
        """Whether ``provider`` can be asked for output following a JSON Schema (``ChildRequest.schema``)."""

    async def run(self, request: ChildRequest) -> ChildResult:
        """Start the child, run its one turn, return how it ended.

        An ordinary failure of the child (its model route failed, it ran out of
        steps) is a result with ``ok`` false, never an exception.

        :raises KeyError: ``request.provider`` is not one of :meth:`providers` (nothing started).
        :raises asyncio.CancelledError: the call was cancelled; the child was reaped first.
        """


def child_agents_of(services: object) -> ChildAgents | None:
    """The host's child-agent service, or ``None`` when the host lends none (contract < 1.5, or not offered)."""
    found = getattr(services, "child_agents", None)
    return found if isinstance(found, ChildAgents) else None
