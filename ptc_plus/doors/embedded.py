"""The embedded-host door: the one place a front door of PTC Plus builds the reference host it runs in.

``ptc-plus chat``, ``exec``, ``mcp-serve`` and ``plugins``, the llm plugin, the
demo and the evaluation are not hosts themselves: each embeds the reference
host with the plugin loaded and puts a model (or a client in the model's seat)
in front of it (ADR 0073, 0121). They differ only in what they hand it: tools,
an approver, where the sessions live, who the user is, extra plugins.
"""

from __future__ import annotations

import contextlib
import getpass
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from hookspecs.reference import Approver, ChildProvider, ReferenceHost
from hookspecs.services import ToolDefinition
from ptc_plus.runtime import scratch_state_dir


@attrs.frozen
class Scratch:
    """Sessions that are never resumed: a private state directory of their own, removed when the door closes.

    ``prefix`` names it (one of the runtime's scratch prefixes, so a sweep knows whose it was).
    """

    prefix: str


@contextlib.asynccontextmanager
async def embedded(
    workspace: Path,
    *,
    tools: Sequence[ToolDefinition] = (),
    approver: Approver | None = None,
    state: Path | Scratch | None = None,
    user: str = "",
    plugins: Sequence[object] = (),
    entry_points: bool = True,
    max_steps: int | None = None,
    child_providers: Mapping[str, ChildProvider] | None = None,
) -> AsyncIterator[ReferenceHost]:
    """The reference host for ``workspace``, open for the block and closed (plugins shut down) after it.

    ``state``: where sessions and spilled text live (``None``: the host's own ``<workspace>/.agent-host``;
    :class:`Scratch`: a directory removed at the end, after the host closed). ``entry_points``: load the
    installed plugins (PTC Plus among them) besides ``plugins``. ``user`` is the host's user id
    (:func:`login_name` for the person at the terminal). ``max_steps`` bounds a turn's model steps (``None``:
    the host's default).
    """
    with contextlib.ExitStack() as stack:
        state_dir = stack.enter_context(scratch_state_dir(state.prefix)) if isinstance(state, Scratch) else state
        options: dict[str, Any] = {} if max_steps is None else {"max_steps": max_steps}
        async with ReferenceHost(
            workspace=workspace,
            state_dir=state_dir,
            tools=tools,
            plugins=plugins,
            load_entry_points=entry_points,
            approver=approver,
            user_id=user,
            child_providers=child_providers,
            **options,
        ) as host:
            yield host


def login_name() -> str:
    """The person the gate and the statistics see: the login name, else nobody in particular."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return ""
