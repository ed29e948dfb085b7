"""Check one config file's parsed TOML and keep only its valid keys.

Each invalid key becomes a :class:`ConfigIssue` with its file and key path
and is dropped, so a neighbouring valid key still counts. Two sections have
stricter consequences, decided here and applied by the loader:

- any problem in ``[statistics]`` marks statistics invalid (they lose their
  vote; manual choices keep working);
- an unusable ``[gate]`` key is a *gate blocker*: the gate fails closed
  unless the environment supplies that key (ADR 0033).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import attrs
from cattrs.errors import ForbiddenExtraKeysError
from cattrs.v import transform_error

from ptc_plus.config import keypath
from ptc_plus.config.converter import CONVERTER, Rejected
from ptc_plus.config.errors import ConfigVersionUnsupported
from ptc_plus.config.issues import ConfigIssue
from ptc_plus.config.locate import Position
from ptc_plus.config.model import (
    CONFIG_VERSION,
    SECTIONS,
    SERVER_NAME,
    UNCAPPED_WORKFLOW_KEYS,
    WORKFLOW_CEILINGS,
    WORKFLOW_NOT_CAPS,
    CapabilityChoice,
    ContextSection,
    GateSection,
    ManagementSection,
    McpServer,
    ReplSection,
    RuntimeCaps,
    RuntimeSection,
    StatisticsSection,
    WorkflowSection,
    is_valid_identity,
)
from ptc_plus.migration import MigrationError, Migrations
from ptc_plus.spelling import closest

WHOLE_FILE = "*"
"""The gate-blocker key meaning "this file's gate settings could not be read at all"."""

MIGRATIONS = Migrations(current=CONFIG_VERSION)
"""Steps taking an older config file's TOML to :data:`CONFIG_VERSION` (ADR 0066), in memory only.

None yet: every release wrote version 1. A version 2 adds ``{1: step}``; a
step works on a person's file, so it moves what is there and leaves values
to the per-key checks that follow, rather than raising on them.
"""

_GATE_KEYS = frozenset(field.name for field in attrs.fields(GateSection))

Finding = tuple[str, str, dict[str, str]]
"""A semantic problem: (field, reason key, reason params)."""


@attrs.frozen(kw_only=True)
class GateBlocker:
    """A ``[gate]`` key (or :data:`WHOLE_FILE`) whose configured value is unusable, and why."""

    key: str
    issue: ConfigIssue


@attrs.frozen(kw_only=True)
class CleanLayer:
    """One file after checking: its valid keys, its issues, and the section verdicts.

    ``statistics_invalid`` and ``gate_invalid`` name the ``[statistics]`` and
    ``[gate]`` keys (or :data:`WHOLE_FILE`) whose values were unusable; a
    higher-precedence file that sets the same key validly overrides them.
    """

    file: str
    data: Mapping[str, Any]
    issues: tuple[ConfigIssue, ...] = ()
    statistics_invalid: tuple[str, ...] = ()
    gate_invalid: tuple[GateBlocker, ...] = ()
    tighten_only: bool = False
    """A workspace file: its sandbox keys may only tighten what lower layers grant (ADR 0045)."""
    positions: Mapping[tuple[str, ...], Position] = attrs.field(factory=dict)
    """Where each key is written in the file (:func:`.locate.key_positions`), to place its issues."""


def unknown_key(file: str, path: str, name: str, known: Iterable[str]) -> ConfigIssue:
    """An ``unknown-key`` issue for ``name`` at ``path``; ``params["suggestion"]`` is the closest known
    name when one is close enough ("did you mean")."""
    close = closest(name, list(known))
    return ConfigIssue(file=file, path=path, reason="unknown-key", params={"suggestion": close} if close else {})


def unusable_layer(issue: ConfigIssue) -> CleanLayer:
    """A file that could not be read or interpreted: it contributes nothing and blocks the gate."""
    blocker = GateBlocker(key=WHOLE_FILE, issue=issue)
    return CleanLayer(
        file=issue.file, data={}, issues=(issue,), statistics_invalid=(WHOLE_FILE,), gate_invalid=(blocker,)
    )


def current_format(raw: Mapping[str, Any], file: str) -> Mapping[str, Any] | ConfigIssue:
    """``raw`` in the format of :data:`CONFIG_VERSION`, migrated through :data:`MIGRATIONS`, or why not.

    Migration happens in memory only: a config file is never rewritten by a
    migration (a person's file stays as they wrote it; only ``ptc-plus
    config set`` writes, and then in the current version). A file without
    ``version`` is in the current format; a ``version`` that is not an
    integer is left to the per-key check (a type issue, the rest of the file
    still counts). A newer version, an older one with no step from it, or an
    older file its step cannot migrate is a whole-file
    :class:`ConfigVersionUnsupported` (PTC-4003).
    """
    version = raw.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        return raw
    try:
        return MIGRATIONS.upgrade(raw).data
    except MigrationError:
        return ConfigIssue.file_problem(
            ConfigVersionUnsupported, file, "version", found=str(version), supported=str(CONFIG_VERSION)
        )


def clean_layer(raw: Mapping[str, Any], file: str, caps: RuntimeCaps) -> CleanLayer:
    """Validate one parsed file (after :func:`current_format`); never raises for bad content."""
    current = current_format(raw, file)
    if isinstance(current, ConfigIssue):
        return unusable_layer(current)
    raw = current
    issues: list[ConfigIssue] = []
    data: dict[str, Any] = {}
    statistics_invalid: list[str] = []
    gate_invalid: list[GateBlocker] = []
    for key, value in raw.items():
        if key == "version":
            if type(value) is not int:  # ``true == 1`` in Python; TOML keeps them apart
                issues.append(ConfigIssue(file=file, path="version", reason="type", params={"expected": "integer"}))
            else:  # the supported version (checked above), kept so the loader records which file set it
                data[key] = value
            continue
        if key not in SECTIONS:
            issues.append(unknown_key(file, keypath.join(key), key, ("version", *SECTIONS)))
            continue
        if not isinstance(value, dict):
            issue = ConfigIssue(file=file, path=key, reason="type", params={"expected": "table"})
            issues.append(issue)
            if key == "statistics":
                statistics_invalid.append(WHOLE_FILE)
            if key == "gate":
                gate_invalid.append(GateBlocker(key=WHOLE_FILE, issue=issue))
            continue
        section_data, found = _SECTION_CHECKS[key](value, file, caps)
        data[key] = section_data
        issues.extend(found)
        if key == "statistics":
            statistics_invalid.extend(issue.path.removeprefix("statistics.") for issue in found)
        if key == "gate":
            gate_invalid.extend(GateBlocker(key=issue.path.removeprefix("gate."), issue=issue) for issue in found)
    return CleanLayer(
        file=file,
        data=data,
        issues=tuple(issues),
        statistics_invalid=tuple(statistics_invalid),
        gate_invalid=tuple(gate_invalid),
    )


def _issues_from(exc: BaseException, kind: type[Any], root: str, file: str) -> Iterator[tuple[str, ConfigIssue]]:
    """(top-level field, issue) pairs for every problem cattrs recorded under ``root``."""
    recorded: list[BaseException] = []

    def remember(problem: BaseException, _: Any) -> str:
        recorded.append(problem)
        return str(len(recorded) - 1)

    for line in transform_error(exc, root, remember):
        index, _, path = line.partition(" @ ")
        problem = recorded[int(index)]
        if isinstance(problem, ForbiddenExtraKeysError):
            for name in sorted(problem.extra_fields):
                known = [field.name for field in attrs.fields(kind)]
                yield name, unknown_key(file, f"{path}.{keypath.toml_key(name)}", name, known)
            continue
        field = path[len(root) + 1 :].split(".")[0].split("[")[0]
        if isinstance(problem, Rejected):
            params = {k: str(v) for k, v in problem.params.items() if k != "given"}
            given = problem.params.get("given")
            if problem.reason == "choice" and isinstance(given, str):
                close = closest(given, str(params.get("choices", "")).split(", "))
                params |= {"suggestion": close} if close else {}
            yield field, ConfigIssue(file=file, path=path, reason=problem.reason, params=params)
        elif isinstance(problem, KeyError):
            yield field, ConfigIssue(file=file, path=path, reason="required")
        else:
            yield field, ConfigIssue(file=file, path=path, reason="other", params={"detail": str(problem)})


def _structured(
    kind: type[Any],
    table: Mapping[str, Any],
    root: str,
    file: str,
    semantics: Callable[[Any], list[Finding]],
) -> tuple[dict[str, Any], list[ConfigIssue]]:
    """Drop invalid keys from ``table`` until the rest structures as ``kind`` and passes ``semantics``."""
    data = dict(table)
    issues: list[ConfigIssue] = []
    dropped: set[str] = set()
    for _ in range(len(table) + 1):
        try:
            value = CONVERTER.structure(data, kind)
        except Exception as exc:  # cattrs raises ClassValidationError or a bare hook error
            found = [(field, issue) for field, issue in _issues_from(exc, kind, root, file) if field not in dropped]
            if not found:  # only a required key we dropped is missing: nothing usable is left
                break
            issues.extend(issue for _, issue in found)
            for field, _ in found:
                data.pop(field, None)
                dropped.add(field)
            continue
        problems = _non_finite(value) or semantics(value)
        for field, reason, params in problems:
            issues.append(ConfigIssue(file=file, path=f"{root}.{field}", reason=reason, params=params))
            data.pop(field, None)
            dropped.add(field)
        if not problems:
            return data, issues
    return {}, issues


def _no_semantics(_: Any) -> list[Finding]:
    return []


def _non_finite(value: Any) -> list[Finding]:
    """Every float setting must be a finite number: TOML's ``nan`` and ``inf`` never are."""
    return [
        (field.name, "finite", {})
        for field in attrs.fields(type(value))
        if isinstance(number := getattr(value, field.name), float) and not math.isfinite(number)
    ]


def _check_gate(table: Mapping[str, Any], file: str, _: RuntimeCaps) -> tuple[dict[str, Any], list[ConfigIssue]]:
    data: dict[str, Any] = {}
    issues: list[ConfigIssue] = []
    for key, value in table.items():
        path = keypath.join("gate", key)
        shaped = _environment_shape(value)
        if key not in _GATE_KEYS:
            issues.append(unknown_key(file, path, key, sorted(_GATE_KEYS)))
        elif shaped is None:
            issues.append(ConfigIssue(file=file, path=path, reason="type", params={"expected": "scalar-or-array"}))
        else:
            data[key] = shaped
    return data, issues


def _environment_shape(value: Any) -> str | None:
    """The text an environment variable would hold for ``value`` (``None``: no such text)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return ",".join(value)
    return None


def _check_management(table: Mapping[str, Any], file: str, _: RuntimeCaps) -> tuple[dict[str, Any], list[ConfigIssue]]:
    def semantics(section: ManagementSection) -> list[Finding]:
        found: list[Finding] = []
        if section.budget_tokens < 0:
            found.append(("budget_tokens", "minimum", {"low": "0"}))
        if section.context_tokens is not None and section.context_tokens < 1:
            found.append(("context_tokens", "minimum", {"low": "1"}))
        return found

    data, issues = _structured(ManagementSection, table, "management", file, semantics)
    if "baseline" in data:
        unique: list[str] = []
        for index, item in enumerate(data["baseline"]):
            if item in unique:
                path = f"management.baseline[{index}]"
                issues.append(ConfigIssue(file=file, path=path, reason="duplicate", params={"item": item}))
            else:
                unique.append(item)
        data["baseline"] = unique
    return data, issues


def _check_capabilities(
    table: Mapping[str, Any], file: str, _: RuntimeCaps
) -> tuple[dict[str, Any], list[ConfigIssue]]:
    data: dict[str, Any] = {}
    issues: list[ConfigIssue] = []
    for identity, entry in table.items():
        root = keypath.join("capabilities", identity)
        if not is_valid_identity(identity):
            issues.append(ConfigIssue(file=file, path=root, reason="identity"))
        elif not isinstance(entry, dict):
            issues.append(ConfigIssue(file=file, path=root, reason="type", params={"expected": "table"}))
        else:
            kept, found = _structured(CapabilityChoice, entry, root, file, _no_semantics)
            issues.extend(found)
            if kept:
                data[identity] = kept
    return data, issues


def _check_statistics(table: Mapping[str, Any], file: str, _: RuntimeCaps) -> tuple[dict[str, Any], list[ConfigIssue]]:
    def semantics(section: StatisticsSection) -> list[Finding]:
        found: list[Finding] = []
        if section.window < 1:
            found.append(("window", "minimum", {"low": "1"}))
        if section.min_samples < 1:
            found.append(("min_samples", "minimum", {"low": "1"}))
        if not 0.0 <= section.threshold <= 1.0:
            found.append(("threshold", "range", {"low": "0", "high": "1"}))
        return found

    return _structured(StatisticsSection, table, "statistics", file, semantics)


def _check_context(table: Mapping[str, Any], file: str, _: RuntimeCaps) -> tuple[dict[str, Any], list[ConfigIssue]]:
    def semantics(section: ContextSection) -> list[Finding]:
        lows = {"discovery_tokens": 1, "recovery_tokens": 0, "preview_tokens": 1}
        return [(key, "minimum", {"low": str(low)}) for key, low in lows.items() if getattr(section, key) < low]

    return _structured(ContextSection, table, "context", file, semantics)


def _check_runtime(table: Mapping[str, Any], file: str, caps: RuntimeCaps) -> tuple[dict[str, Any], list[ConfigIssue]]:
    def semantics(section: RuntimeSection) -> list[Finding]:
        found: list[Finding] = []
        for cap in attrs.fields(RuntimeCaps):
            value, ceiling = getattr(section, cap.name), getattr(caps, cap.name)
            if value <= 0:
                found.append((cap.name, "positive", {}))
            elif value > ceiling:
                found.append((cap.name, "above-cap", {"value": str(value), "cap": str(ceiling)}))
        return found

    return _structured(RuntimeSection, table, "runtime", file, semantics)


def _check_repl(table: Mapping[str, Any], file: str, _: RuntimeCaps) -> tuple[dict[str, Any], list[ConfigIssue]]:
    """``[repl]``: ``bindings`` is a list of non-empty paths; whether each file loads is decided when the
    bindings are read (:mod:`.bindings`), so a missing file never drops its neighbours here."""

    def semantics(section: ReplSection) -> list[Finding]:
        return [("bindings", "empty", {})] if any(not path.strip() for path in section.bindings) else []

    return _structured(ReplSection, table, "repl", file, semantics)


def _check_workflow(table: Mapping[str, Any], file: str, _: RuntimeCaps) -> tuple[dict[str, Any], list[ConfigIssue]]:
    """``[workflow]``: every cap positive (``max_concurrent_agents`` may be 0, auto) and within its ceiling."""

    def semantics(section: WorkflowSection) -> list[Finding]:
        found: list[Finding] = []
        for field in attrs.fields(WorkflowSection):
            if field.name in WORKFLOW_NOT_CAPS:
                continue  # the price sheet's entries are parsed where a cost cap uses them (PTC-8035)
            value, ceiling = getattr(section, field.name), getattr(WORKFLOW_CEILINGS, field.name)
            low = 0 if field.name == "max_concurrent_agents" or field.name in UNCAPPED_WORKFLOW_KEYS else None
            if (low is None and value <= 0) or (low is not None and value < low):
                found.append((field.name, "positive", {}) if low is None else (field.name, "minimum", {"low": "0"}))
            elif field.name not in UNCAPPED_WORKFLOW_KEYS and value > ceiling:
                found.append((field.name, "above-cap", {"value": str(value), "cap": str(ceiling)}))
        return found

    return _structured(WorkflowSection, table, "workflow", file, semantics)


_MCP_KEYS = ("servers", "consent")
FINGERPRINT_PREFIX = "sha256:"


def _check_mcp(table: Mapping[str, Any], file: str, _: RuntimeCaps) -> tuple[dict[str, Any], list[ConfigIssue]]:
    """``[mcp]``: each ``servers.<name>`` checked alone (a bad one drops, its neighbours stay), then ``consent``."""
    data: dict[str, Any] = {}
    issues: list[ConfigIssue] = []
    for key, value in table.items():
        path = keypath.join("mcp", key)
        if key not in _MCP_KEYS:
            issues.append(unknown_key(file, path, key, _MCP_KEYS))
        elif not isinstance(value, dict):
            issues.append(ConfigIssue(file=file, path=path, reason="type", params={"expected": "table"}))
        elif key == "servers":
            data[key] = _check_servers(value, file, issues)
        else:
            data[key] = _check_consent(value, file, issues)
    return data, issues


def _check_servers(table: Mapping[str, Any], file: str, issues: list[ConfigIssue]) -> dict[str, Any]:
    def semantics(server: McpServer) -> list[Finding]:
        found: list[Finding] = []
        if not server.command.strip():
            found.append(("command", "empty", {}))
        if server.timeout_s <= 0:
            found.append(("timeout_s", "positive", {}))
        if server.start_timeout_s <= 0:
            found.append(("start_timeout_s", "positive", {}))
        found += [("env", "env-name", {"name": name}) for name in server.env if not _env_name(name)]
        return found

    kept_servers: dict[str, Any] = {}
    for name, entry in table.items():
        root = keypath.join("mcp", "servers", name)
        if not SERVER_NAME.fullmatch(name):
            issues.append(ConfigIssue(file=file, path=root, reason="server-name", params={"name": name}))
        elif not isinstance(entry, dict):
            issues.append(ConfigIssue(file=file, path=root, reason="type", params={"expected": "table"}))
        else:
            # A file may set some keys of a server another file defines (workspace over user, per key), so
            # ``command`` is checked once the files are merged (:mod:`.loader`), not here.
            given = "command" in entry
            kept, found = _structured(McpServer, {"command": _PLACEHOLDER, **entry}, root, file, semantics)
            issues.extend(found)
            if not given:
                kept.pop("command", None)
            kept_servers[name] = kept
    return kept_servers


_PLACEHOLDER = "-"
"""Stands for a ``command`` this file does not set while its other keys are checked."""


def _env_name(name: str) -> bool:
    return bool(name) and "=" not in name and "\0" not in name


def _check_consent(table: Mapping[str, Any], file: str, issues: list[ConfigIssue]) -> dict[str, Any]:
    """``consent."<workspace real path>".<server> = "sha256:<hex>"``; anything else is dropped with an issue."""
    kept: dict[str, Any] = {}
    for place, servers in table.items():
        root = keypath.join("mcp", "consent", place)
        if not place.startswith("/"):
            issues.append(ConfigIssue(file=file, path=root, reason="absolute-path", params={"path": place}))
            continue
        if not isinstance(servers, dict):
            issues.append(ConfigIssue(file=file, path=root, reason="type", params={"expected": "table"}))
            continue
        entries: dict[str, str] = {}
        for name, mark in servers.items():
            path = keypath.join("mcp", "consent", place, name)
            if not SERVER_NAME.fullmatch(name):
                issues.append(ConfigIssue(file=file, path=path, reason="server-name", params={"name": name}))
            elif not isinstance(mark, str) or not mark.startswith(FINGERPRINT_PREFIX):
                issues.append(ConfigIssue(file=file, path=path, reason="fingerprint"))
            else:
                entries[name] = mark
        kept[place] = entries
    return kept


_SECTION_CHECKS: dict[
    str, Callable[[Mapping[str, Any], str, RuntimeCaps], tuple[dict[str, Any], list[ConfigIssue]]]
] = {
    "gate": _check_gate,
    "management": _check_management,
    "capabilities": _check_capabilities,
    "statistics": _check_statistics,
    "context": _check_context,
    "runtime": _check_runtime,
    "mcp": _check_mcp,
    "repl": _check_repl,
    "workflow": _check_workflow,
}
