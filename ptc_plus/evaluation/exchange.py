"""What one run of a task produced: every model exchange of its family, the answer and the verdict.

Kept apart from the runner so metering and the results file read these types
without importing the engine (hosts, sandboxes, MCP).
"""

from __future__ import annotations

import attrs

from hookspecs.reference import AssistantTurn, ModelRequest
from ptc_plus.evaluation.task import Style, Task, Verdict


@attrs.frozen(kw_only=True)
class ProviderUsage:
    """Token counts a real provider reported for one request; ``None`` where it said nothing (never 0).

    :ivar input: every input token of the request (cached and not).
    :ivar cached_input: the part of ``input`` the provider served from its cache.
    :ivar output: the answer's tokens.
    """

    input: int | None
    cached_input: int | None
    output: int | None


@attrs.frozen(kw_only=True)
class Exchange:
    """One model request exactly as the host sent it, and the model's answer.

    :ivar session_id: the session that sent it (a child agent's own id for its requests).
    :ivar parent_session_id: the parent of that session; ``None`` for the root session.
    :ivar usage: the provider's numbers in real-model mode; ``None`` for a scripted run.
    """

    session_id: str
    parent_session_id: str | None
    request: ModelRequest
    answer: AssistantTurn
    usage: ProviderUsage | None = None


@attrs.frozen(kw_only=True)
class RunResult:
    """One task run in one style at one catalog size.

    :ivar exchanges: every exchange of the family in the order they happened (children included).
    :ivar final_text: the root session's final answer (``""`` when the run failed before it).
    :ivar verdict: the oracle's verdict; a failed run is a failed verdict whose reason is the error.
    :ivar error: the error that stopped the run (``"PTC-xxxx: message"``), ``""`` if none.
    :ivar not_runnable: why the style cannot run at this catalog size (a request beyond the model's
        context), ``""`` if it can: a state of the record, not a failure of the product.
    """

    task: Task
    style: Style
    catalog: int
    exchanges: tuple[Exchange, ...]
    final_text: str
    verdict: Verdict
    error: str = ""
    not_runnable: str = ""
