"""A workspace file may only tighten what protects the user, never loosen it (ADR 0045, 0086).

Any repository a user opens can carry ``.ptc-plus/config.toml``, so every
key that protects the user may only move, from there, towards more
protection than the user-level file (or the default) already gives. The keys
and what "looser" means for each are one table, :data:`RULES`:

- ``[runtime] policy`` (``read-only`` ⊂ ``workspace-write`` ⊂
  ``danger-full-access``), ``network`` (``false`` ⊂ ``true``) and ``executor``
  (only towards a stronger boundary, :attr:`ExecutorName.strength`, ADR 0127);
- every ``[runtime]`` limit (time, grace, sizes, memory, pending calls,
  kernel idle time and count): only lower;
- the gate: ``mode`` only towards ``off`` (``off`` ⊂ ``partial`` ⊂
  ``on``), ``user_allowlist`` and ``toolset_allowlist`` only shrink,
  ``toolset_blocklist`` only grows, ``rollout_percent`` only lowers, the
  ``debug`` title filter only appears, and ``rollout_salt`` never changes (another
  salt moves other users into the rollout); values are compared as the gate
  parses them (:mod:`ptc_plus.gate_values`), so an invalid one counts as what
  the gate makes of it;
- ``[mcp.servers.<name>] enabled`` of a server a lower layer defines: only to
  ``false`` (a workspace cannot start a server the user disabled; a server of
  its own needs consent anyway, ADR 0071).

A loosening value is a config issue (reason ``loosening``) and is dropped, so
the lower layer's value is kept. ``[mcp.consent]`` is the user's alone:
:func:`without_consent` drops it from a workspace file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs

from ptc_plus import gate_values
from ptc_plus.config.issues import ConfigIssue
from ptc_plus.config.keypath import join
from ptc_plus.config.model import (
    UNCAPPED_WORKFLOW_KEYS,
    WORKFLOW_NOT_CAPS,
    RuntimeCaps,
    RuntimeSection,
    WorkflowSection,
    auto_concurrency,
)
from ptc_plus.config.validate import CleanLayer
from ptc_plus.gate_values import GateMode
from ptc_plus.runtime import ExecutorName
from ptc_plus.sandbox_policy import SandboxPolicy

_POLICY_ORDER = (SandboxPolicy.READ_ONLY, SandboxPolicy.WORKSPACE_WRITE, SandboxPolicy.DANGER_FULL_ACCESS)
_MODE_ORDER = (GateMode.OFF, GateMode.PARTIAL, GateMode.ON)
_ANY = "*"
"""A path part matching every key of its table (``mcp.servers.*.enabled``)."""
_SKIP = object()
"""A rule's ``absent`` answer: the lower layers do not have this key's table, so there is nothing to loosen."""


@attrs.frozen
class Rule:
    """One tighten-only key: where it is and when a workspace value is looser than the one below.

    :ivar path: the key path; a ``*`` part matches any key (a server name).
    :ivar looser: ``(workspace value, lower value) -> bool``, both as the files hold them (``None`` for an
        unset gate key, the default for an unset runtime key).
    :ivar shown: how a value is written in the issue.
    :ivar absent: the lower value when no lower layer sets the key, given the key's concrete path; :data:`_SKIP`
        when the rule does not apply then.
    """

    path: tuple[str, ...]
    looser: Callable[[Any, Any], bool]
    shown: Callable[[Any], str]
    absent: Callable[[tuple[str, ...], Mapping[str, Any]], Any]


_RUNTIME_DEFAULTS = RuntimeSection()
_WORKFLOW_DEFAULTS = WorkflowSection()


def _workflow_default(path: tuple[str, ...], _: Mapping[str, Any]) -> Any:
    return getattr(_WORKFLOW_DEFAULTS, path[-1])


def _workflow_looser(name: str) -> Callable[[Any, Any], bool]:
    """A workspace value above the one below is looser; ``max_concurrent_agents = 0`` counts as its auto value."""
    if name in UNCAPPED_WORKFLOW_KEYS:  # 0 is no cap: the loosest of all
        return lambda value, lower: lower != 0 and (value == 0 or value > lower)
    if name != "max_concurrent_agents":
        return lambda value, lower: value > lower
    return lambda value, lower: (value or auto_concurrency()) > (lower or auto_concurrency())


def _runtime_default(path: tuple[str, ...], _: Mapping[str, Any]) -> Any:
    return getattr(_RUNTIME_DEFAULTS, path[-1])


def _unset(_: tuple[str, ...], __: Mapping[str, Any]) -> Any:
    return None


def _enabled_by_default(path: tuple[str, ...], below: Mapping[str, Any]) -> Any:
    """A server's ``enabled`` defaults to true, but only a server some lower layer defines can be revived."""
    return True if _lookup(below, path[:-1]) is not _SKIP else _SKIP


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, SandboxPolicy):
        return str(value.value)
    return str(value)


def _items(raw: str | None) -> frozenset[str]:
    return gate_values.parse_list(raw) or frozenset()


def _list_text(raw: str | None) -> str:
    return "[" + ", ".join(sorted(_items(raw))) + "]"


def _mode(raw: str | None) -> int:
    return _MODE_ORDER.index(gate_values.parse_mode(raw)[0])


def _percent(raw: str | None) -> int:
    return gate_values.parse_rollout_percent(raw)[0]


def _allowlist_wider(value: str | None, lower: str | None) -> bool:
    """An unset toolset allowlist admits every toolset; a set one only its items (empty parses as unset)."""
    kept = gate_values.parse_list(lower)
    found = gate_values.parse_list(value)
    return kept is not None and (found is None or not found <= kept)


def _debug_wider(value: str | None, lower: str | None) -> bool:
    """No title filter admits every title; ``opt-in`` and ``opt-out`` admit different ones, so neither narrows
    the other."""
    kept = gate_values.parse_debug(lower)[0]
    return kept is not None and gate_values.parse_debug(value)[0] != kept


RULES: tuple[Rule, ...] = (
    Rule(
        ("runtime", "policy"),
        lambda value, lower: _POLICY_ORDER.index(SandboxPolicy(value)) > _POLICY_ORDER.index(SandboxPolicy(lower)),
        lambda value: str(SandboxPolicy(value).value),
        _runtime_default,
    ),
    Rule(("runtime", "network"), lambda value, lower: bool(value) and not lower, _text, _runtime_default),
    Rule(
        ("runtime", "executor"),
        lambda value, lower: ExecutorName(value).strength < ExecutorName(lower).strength,
        lambda value: str(ExecutorName(value).value),
        _runtime_default,
    ),
    *(
        Rule(("runtime", limit.name), lambda value, lower: value > lower, _text, _runtime_default)
        for limit in attrs.fields(RuntimeCaps)
    ),
    Rule(
        ("gate", "mode"),
        lambda value, lower: _mode(value) > _mode(lower),
        lambda raw: str(gate_values.parse_mode(raw)[0]),
        _unset,
    ),
    Rule(
        ("gate", "user_allowlist"),
        lambda value, lower: not _items(value) <= _items(lower),  # unset under partial admits nobody
        _list_text,
        _unset,
    ),
    Rule(("gate", "toolset_allowlist"), _allowlist_wider, _list_text, _unset),
    Rule(("gate", "toolset_blocklist"), lambda value, lower: not _items(lower) <= _items(value), _list_text, _unset),
    Rule(
        ("gate", "rollout_percent"),
        lambda value, lower: _percent(value) > _percent(lower),
        lambda raw: str(_percent(raw)),
        _unset,
    ),
    Rule(
        ("gate", "rollout_salt"),
        lambda value, lower: gate_values.parse_salt(value) != gate_values.parse_salt(lower),
        gate_values.parse_salt,
        _unset,
    ),
    Rule(("gate", "debug"), _debug_wider, lambda raw: str(gate_values.parse_debug(raw)[0] or "-"), _unset),
    Rule(
        ("mcp", "servers", _ANY, "enabled"), lambda value, lower: bool(value) and not lower, _text, _enabled_by_default
    ),
    *(
        Rule(("workflow", cap.name), _workflow_looser(cap.name), _text, _workflow_default)
        for cap in attrs.fields(WorkflowSection)
        if cap.name not in WORKFLOW_NOT_CAPS  # the price sheet is the user file's alone (without_prices)
    ),
)
"""Every tighten-only key of a workspace file (ADR 0045, 0086); the reference marks the same keys."""

TIGHTEN_ONLY_PATHS = frozenset(rule.path for rule in RULES)
"""The key paths :data:`RULES` covers (``*`` for any server name)."""


def tighten_only(layer: CleanLayer, below: Mapping[str, Any]) -> CleanLayer:
    """``layer`` without any tighten-only key looser than ``below`` (the merged lower layers), with issues.

    ``below`` is the raw merged data of every lower-precedence layer; a key it does not set has the rule's
    ``absent`` value (the default).
    """
    data: Mapping[str, Any] = layer.data
    issues: list[ConfigIssue] = []
    for rule in RULES:
        for path, value in list(_matches(layer.data, rule.path)):
            current = _lookup(below, path)
            if current is _SKIP:
                current = rule.absent(path, below)
            if current is _SKIP or not rule.looser(value, current):
                continue
            data = _without(data, path)
            params = {"value": rule.shown(value), "kept": rule.shown(current)}
            issues.append(ConfigIssue(file=layer.file, path=join(*path), reason="loosening", params=params))
    if not issues:
        return layer
    return attrs.evolve(layer, data=data, issues=(*layer.issues, *issues))


def without_consent(layer: CleanLayer) -> CleanLayer:
    """A workspace ``layer`` without ``[mcp.consent]``: a repository cannot allow its own servers (ADR 0071)."""
    return _without_user_only(layer, "mcp", "consent", "user-only")


def without_prices(layer: CleanLayer) -> CleanLayer:
    """A workspace ``layer`` without ``[workflow] prices``: a repository must not price its own work (ADR 0125)."""
    return _without_user_only(layer, "workflow", "prices", "prices-user-only")


def _without_user_only(layer: CleanLayer, section: str, key: str, reason: str) -> CleanLayer:
    """``layer`` without ``[section] key``, which only the user file may set; a problem (``reason``) when the
    workspace file set it to something (an empty table sets nothing: nothing to report)."""
    table = layer.data.get(section)
    if not table or key not in table:
        return layer
    kept = {name: value for name, value in table.items() if name != key}
    data = {**layer.data, section: kept}
    if not table[key]:
        return attrs.evolve(layer, data=data)
    issue = ConfigIssue(file=layer.file, path=f"{section}.{key}", reason=reason)
    return attrs.evolve(layer, data=data, issues=(*layer.issues, issue))


def _matches(data: Mapping[str, Any], pattern: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    """``(concrete path, value)`` of every key of ``data`` that ``pattern`` matches."""
    head, rest = pattern[0], pattern[1:]
    keys = list(data) if head == _ANY else [head] if head in data else []
    for key in keys:
        value = data[key]
        if not rest:
            yield (key,), value
        elif isinstance(value, Mapping):
            yield from (((key, *path), found) for path, found in _matches(value, rest))


def _lookup(data: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    """The value at ``path`` of ``data``; :data:`_SKIP` when it is not there."""
    value: Any = data
    for key in path:
        if not isinstance(value, Mapping) or key not in value:
            return _SKIP
        value = value[key]
    return value


def _without(data: Mapping[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    """A copy of ``data`` without the key at ``path`` (the tables along it copied, the rest shared)."""
    head, rest = path[0], path[1:]
    if not rest:
        return {key: value for key, value in data.items() if key != head}
    return {**data, head: _without(data[head], rest)}
