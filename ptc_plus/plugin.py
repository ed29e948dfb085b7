"""The PTC Plus plugin: hook implementations registered through the ``agent_host`` entry point.

This module is the plugin object a host loads; it only wires seams to the
subpackages that own each concern.
"""

from __future__ import annotations

from collections.abc import Sequence

from hookspecs import AgentRef, HostServices, ToolDefinition, hookimpl


@hookimpl
def agent_host_tools(agent: AgentRef, services: HostServices) -> Sequence[ToolDefinition]:
    return []
