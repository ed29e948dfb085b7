"""A workspace file may only tighten the sandbox, never loosen it (ADR 0045).

Any repository a user opens can carry ``.ptc-plus/config.toml``, so its
``[runtime] policy`` and ``network`` may only move towards more confinement
than the user-level file (or the default) already grants:
``read-only`` ⊂ ``workspace-write`` ⊂ ``danger-full-access`` and
``network = false`` ⊂ ``true``. A loosening value is a config issue and is
dropped, so the lower layer's value is kept.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from ptc_plus.config.issues import ConfigIssue
from ptc_plus.config.model import RuntimeSection
from ptc_plus.config.validate import CleanLayer
from ptc_plus.sandbox_policy import SandboxPolicy

_POLICY_ORDER = (SandboxPolicy.READ_ONLY, SandboxPolicy.WORKSPACE_WRITE, SandboxPolicy.DANGER_FULL_ACCESS)

_LOOSENESS: Mapping[str, Callable[[Any], int]] = {
    "policy": lambda value: _POLICY_ORDER.index(SandboxPolicy(value)),
    "network": lambda value: int(bool(value)),
}
"""Tighten-only ``[runtime]`` keys -> how loose a (checked) value is; higher is looser."""

_DEFAULTS = RuntimeSection()


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(SandboxPolicy(value).value)


def tighten_only(layer: CleanLayer, below: Mapping[str, Any]) -> CleanLayer:
    """``layer`` without any tighten-only key looser than ``below`` (the merged lower layers), with issues.

    ``below`` is the raw merged data of every lower-precedence layer; a key it
    does not set has its default.
    """
    runtime = layer.data.get("runtime")
    if not runtime:
        return layer
    lower = below.get("runtime", {})
    kept = dict(runtime)
    issues: list[ConfigIssue] = []
    for key, looseness in _LOOSENESS.items():
        if key not in runtime:
            continue
        current = lower.get(key, getattr(_DEFAULTS, key))
        if looseness(runtime[key]) > looseness(current):
            del kept[key]
            params = {"value": _text(runtime[key]), "kept": _text(current)}
            issues.append(ConfigIssue(file=layer.file, path=f"runtime.{key}", reason="loosening", params=params))
    if not issues:
        return layer
    return attrs.evolve(layer, data={**layer.data, "runtime": kept}, issues=(*layer.issues, *issues))


def without_consent(layer: CleanLayer) -> CleanLayer:
    """A workspace ``layer`` without ``[mcp.consent]``: a repository cannot allow its own servers (ADR 0071)."""
    mcp = layer.data.get("mcp")
    if not mcp or "consent" not in mcp:
        return layer
    kept = {key: value for key, value in mcp.items() if key != "consent"}
    if not mcp["consent"]:  # an empty table allows nothing: nothing to report
        return attrs.evolve(layer, data={**layer.data, "mcp": kept})
    issue = ConfigIssue(file=layer.file, path="mcp.consent", reason="user-only")
    return attrs.evolve(layer, data={**layer.data, "mcp": kept}, issues=(*layer.issues, issue))
