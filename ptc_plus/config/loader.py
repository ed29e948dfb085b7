"""Load the effective configuration: workspace file over user file over defaults, per key.

Loading never raises for bad content: every problem is a
:class:`ConfigIssue` naming its file and key path, and every valid key
still counts. Call :meth:`LoadedConfig.raise_if_invalid` for a strict load.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from ptc_plus.config.converter import CONVERTER
from ptc_plus.config.errors import ConfigInvalid
from ptc_plus.config.issues import ConfigIssue
from ptc_plus.config.keypath import join
from ptc_plus.config.locate import key_positions, locate
from ptc_plus.config.model import DEFAULT_CAPS, PtcConfig, RuntimeCaps
from ptc_plus.config.paths import user_config_file, workspace_config_file
from ptc_plus.config.revision import config_revision
from ptc_plus.config.source import read_config
from ptc_plus.config.tighten import tighten_only, without_consent, without_prices
from ptc_plus.config.validate import WHOLE_FILE, CleanLayer, GateBlocker, clean_layer, unusable_layer


@attrs.frozen(kw_only=True)
class LoadedConfig:
    """The effective config with everything learned while loading it.

    :ivar files: config files that exist, lowest precedence first.
    :ivar origins: dotted key path of every configured leaf -> the file that set it.
    :ivar statistics_disabled: an invalid statistics setting switched statistics off.
    :ivar gate_blockers: unusable gate settings; the gate fails closed on each
        one the environment does not override.
    """

    config: PtcConfig
    revision: str
    files: tuple[str, ...] = ()
    issues: tuple[ConfigIssue, ...] = ()
    origins: Mapping[str, str] = attrs.field(factory=dict)
    statistics_disabled: bool = False
    gate_blockers: tuple[GateBlocker, ...] = ()
    workspace_file: str | None = None
    """The workspace file among ``files`` (``None``: none was read); what it set needs the user's consent to
    start a program (``[mcp.servers]``, ADR 0071)."""
    workspace: str | None = None
    """The workspace the config was loaded for (:func:`load_config`), whether or not it has a file: a binding
    file inside it is opened beneath it without following links (ADR 0086)."""
    binding_origins: tuple[tuple[str, int], ...] = ()
    """For each entry of ``config.repl.bindings``: the file that listed it and its index in that file's list
    (the lists of all files are concatenated, lowest precedence first; ADR 0082)."""

    def raise_if_invalid(self) -> None:
        """Raise :class:`ConfigInvalid` when any issue was found."""
        if self.issues:
            first = self.issues[0]
            raise ConfigInvalid(count=len(self.issues), first=first.message("en")) from first.to_error()


def read_layer(path: Path, caps: RuntimeCaps = DEFAULT_CAPS, *, tighten_only: bool = False) -> CleanLayer | None:
    """The checked content of ``path``; ``None`` when the file does not exist.

    ``tighten_only`` marks a workspace file: when combined, its sandbox keys
    may only tighten what the layers below grant (:mod:`.tighten`).
    """
    layer = _read(path, caps)
    return attrs.evolve(layer, tighten_only=True) if layer is not None and tighten_only else layer


def _read(path: Path, caps: RuntimeCaps) -> CleanLayer | None:
    found = read_config(path)
    if found is None:
        return None
    if isinstance(found, ConfigIssue):
        return unusable_layer(found)
    layer = clean_layer(found.data, found.file, caps)
    return attrs.evolve(layer, positions=key_positions(found.text))


def load_config(
    workspace: Path | None,
    *,
    env: Mapping[str, str] | None = None,
    user_file: Path | None = None,
    caps: RuntimeCaps = DEFAULT_CAPS,
) -> LoadedConfig:
    """Read the user file (``user_file`` or :func:`user_config_file`) and the workspace file.

    The workspace file wins per key, except that it may only tighten what
    protects the user (the sandbox, every ``[runtime]`` limit, the gate, a user
    server's ``enabled``; :mod:`.tighten`): loosening comes only from the user
    file (ADR 0045, 0086).
    """
    found = [read_layer(user_file or user_config_file(env), caps)]
    if workspace is not None:
        found.append(read_layer(workspace_config_file(workspace), caps, tighten_only=True))
    loaded = combine([layer for layer in found if layer is not None])
    return attrs.evolve(loaded, workspace=str(workspace)) if workspace is not None else loaded


def combine(layers: Sequence[CleanLayer]) -> LoadedConfig:
    """Merge checked layers (lowest precedence first) into one :class:`LoadedConfig`."""
    merged: dict[str, Any] = {}
    origins: dict[str, str] = {}
    checked: list[CleanLayer] = []
    bindings: list[str] = []
    binding_origins: list[tuple[str, int]] = []
    for layer in layers:
        if layer.tighten_only:
            layer = without_prices(without_consent(tighten_only(layer, merged)))
        checked.append(layer)
        _merge(merged, layer.data, (), layer.file, origins)
        listed = layer.data.get("repl", {}).get("bindings", ())
        bindings += listed
        binding_origins += [(layer.file, index) for index in range(len(listed))]
    layers = checked
    if bindings:  # every file's list counts, the user's first: a workspace adds bindings, never hides the user's
        merged["repl"]["bindings"] = bindings
    issues = [issue for layer in layers for issue in layer.issues]
    issues += _without_incomplete_servers(merged, origins, {issue.path for issue in issues})
    config = CONVERTER.structure(merged, PtcConfig)
    statistics_invalid = any(
        _unresolved(layers, index, "statistics", layer.statistics_invalid) for index, layer in enumerate(layers)
    )
    stats = config.statistics
    if stats.min_samples > stats.window:
        statistics_invalid = True
        file = origins.get("statistics.min_samples") or origins.get("statistics.window", "")
        params = {"min_samples": str(stats.min_samples), "window": str(stats.window)}
        issues.append(
            ConfigIssue(file=file, path="statistics.min_samples", reason="min-samples-above-window", params=params)
        )
    if statistics_invalid:
        config = attrs.evolve(config, statistics=attrs.evolve(stats, enabled=False))
    issues = [_placed(issue, layers) for issue in issues]
    return LoadedConfig(
        config=config,
        revision=config_revision(config),
        files=tuple(layer.file for layer in layers),
        issues=tuple(issues),
        origins=origins,
        statistics_disabled=statistics_invalid,
        gate_blockers=tuple(attrs.evolve(b, issue=_placed(b.issue, layers)) for b in _gate_blockers(layers)),
        workspace_file=next((layer.file for layer in layers if layer.tighten_only), None),
        binding_origins=tuple(binding_origins),
    )


def _without_incomplete_servers(
    merged: dict[str, Any], origins: Mapping[str, str], reported: set[str]
) -> list[ConfigIssue]:
    """Drop every merged ``[mcp.servers.<name>]`` no file gave a usable ``command``; a ``required`` issue for
    each whose ``command`` no other issue already names."""
    servers = merged.get("mcp", {}).get("servers", {})
    issues: list[ConfigIssue] = []
    for name in [name for name, server in servers.items() if "command" not in server]:
        del servers[name]
        prefix = join("mcp", "servers", name) + "."
        path = join("mcp", "servers", name, "command")
        if path not in reported:
            file = next((f for key, f in reversed(list(origins.items())) if key.startswith(prefix)), "")
            issues.append(ConfigIssue(file=file, path=path, reason="required"))
    return issues


def _placed(issue: ConfigIssue, layers: Sequence[CleanLayer]) -> ConfigIssue:
    """``issue`` with the line and column of its key, when its file was read and the key is written there."""
    if issue.line is not None or not issue.path:
        return issue
    positions = next((layer.positions for layer in layers if layer.file == issue.file), {})
    where = locate(positions, issue.path)
    return attrs.evolve(issue, line=where.line, column=where.column) if where else issue


def _merge(
    into: dict[str, Any], data: Mapping[str, Any], prefix: tuple[str, ...], file: str, origins: dict[str, str]
) -> None:
    for key, value in data.items():
        if isinstance(value, dict):
            _merge(into.setdefault(key, {}), value, (*prefix, key), file, origins)
        else:
            into[key] = value
            origins[join(*prefix, key)] = file


def _gate_blockers(layers: Sequence[CleanLayer]) -> tuple[GateBlocker, ...]:
    return tuple(
        blocker
        for index, layer in enumerate(layers)
        for blocker in layer.gate_invalid
        if _unresolved(layers, index, "gate", (blocker.key,), by_workspace=False)
    )


def _unresolved(
    layers: Sequence[CleanLayer], index: int, section: str, keys: Sequence[str], *, by_workspace: bool = True
) -> bool:
    """Whether any of ``keys`` (bad in ``layers[index]``) is not set validly by a higher-precedence layer.

    ``by_workspace`` false: a workspace file's value does not count (a user file's unusable gate key keeps the
    gate closed; a repository cannot reopen it, ADR 0086).
    """
    later = [layer.data.get(section, {}) for layer in layers[index + 1 :] if by_workspace or not layer.tighten_only]
    return any(key == WHOLE_FILE or not any(key in data for data in later) for key in keys)
