"""The pluggy markers of the host contract.

``PROJECT_NAME`` is both the pluggy project name and the entry-point group a
host loads plugins from.
"""

from __future__ import annotations

import pluggy

PROJECT_NAME = "agent_host"
ENTRY_POINT_GROUP = PROJECT_NAME

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
