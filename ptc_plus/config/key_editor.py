"""Set one key of either config file only if it still holds what the caller saw (ADR 0126, ADR 0129).

The settings page loads both files, the user edits a value, and the save happens later: meanwhile the CLI
(``ptc-plus capabilities set``, an editor) or another tab may have changed the same key. A save therefore
names the value it saw (``expected``) and is refused with :class:`ConfigEditConflict` when the file now
holds something else. The new text is checked by the config checker itself (the loader's per-key checks
and the cross-file ones, both files combined as a session combines them) before anything is written: a
problem the edit would add is :class:`ConfigValueRejected` with the checker's findings, and the file is
untouched. Writes take the same locks and atomic replace as every editor of this package (the
``.ptc-plus`` directory lock beneath the workspace, the user file's directory lock), and comments and
layout survive (tomlkit; a capability's choice goes through :func:`.editor.capability_text`, exactly as
``ptc-plus capabilities set`` writes it).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import tomlkit
from tomlkit.items import InlineTable, Table

from ptc_plus.config.editor import INHERIT, EditResult, _parse, _set_off, capability_text
from ptc_plus.config.errors import ConfigEditConflict, ConfigEditRefused
from ptc_plus.config.issues import ConfigIssue, ConfigValueRejected
from ptc_plus.config.keypath import join
from ptc_plus.config.keys import toml_literal
from ptc_plus.config.loader import combine, read_layer
from ptc_plus.config.model import DEFAULT_CAPS
from ptc_plus.config.paths import Scope, user_config_file, workspace_config_file
from ptc_plus.config.source import parse_config, read_config
from ptc_plus.config.user_file import locked_user_file
from ptc_plus.config.validate import CleanLayer, clean_layer, unusable_layer
from ptc_plus.config.workspace_file import LockedConfigFile, locked_workspace_file

KeyPath = tuple[str, ...]
"""A key as its table names and its own name: ``("statistics", "window")``,
``("capabilities", "<identity>", "disclosure")``."""


def config_file(scope: Scope, workspace: Path) -> Path:
    """The file of ``scope``: the workspace's ``.ptc-plus/config.toml`` or the user's."""
    return workspace_config_file(workspace) if scope is Scope.WORKSPACE else user_config_file()


def file_values(scope: Scope, workspace: Path) -> Mapping[str, Any]:
    """What the file of ``scope`` holds now, as TOML data, invalid values included (``{}``: no file, or one
    that is not TOML): the values a page shows for editing and sends back as ``expected``."""
    found = read_config(config_file(scope, workspace))
    return found.data if found is not None and not isinstance(found, ConfigIssue) else {}


def value_at(data: Mapping[str, Any], key: KeyPath) -> Any:
    """The value at ``key`` in ``data`` (``None``: not set, or a table on the way is no table)."""
    current: Any = data
    for part in key:
        if not isinstance(current, Mapping) or part not in current:
            return None
        current = current[part]
    return current


def same_value(left: Any, right: Any) -> bool:
    """Equal as TOML values: ``true`` is not ``1``, ``1`` is not ``1.0`` (Python's ``==`` says they are)."""
    if type(left) is not type(right):
        return False
    if isinstance(left, list):
        return len(left) == len(right) and all(same_value(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(same_value(left[k], right[k]) for k in left)
    return bool(left == right)


def set_config_value(scope: Scope, workspace: Path, key: KeyPath, value: Any, *, expected: Any) -> EditResult:
    """Write ``value`` (``None``: remove the key) at ``key`` of the file of ``scope`` if it now holds ``expected``
    (``None``: not set); ``previous`` is the value it held, as TOML (``None``: not set).

    :raises ConfigEditConflict: the file holds another value (``theirs``: TOML, ``""`` when not set).
    :raises ConfigValueRejected: the checker finds a problem the edit would add (a value of the wrong type,
        out of range, a duplicate, a ``min_samples`` above the ``window`` in force).
    :raises ConfigEditRefused: a table on the way is no table, or the file cannot be edited safely.
    :raises ConfigError: the file is not readable or not TOML (the loader's message; it is never rewritten).
    """
    path = config_file(scope, workspace)
    with _locked(scope, workspace, create=value is not None) as locked:
        found = locked.read() if locked is not None else None
        current = value_at(found.data, key) if found is not None else None
        if not same_value(current, expected):
            theirs = "" if current is None else toml_literal(current)
            raise ConfigEditConflict(file=str(path), setting=join(*key), theirs=theirs)
        previous = None if current is None else toml_literal(current)
        if locked is None or (found is None and value is None):
            return EditResult(file=path, changed=False, previous=previous)
        original = found.text if found is not None else None
        text = _edited(original, key, value, path)
        rejected = _added_problems(scope, workspace, path, original, text)
        if rejected:
            first = rejected[0]
            raise ConfigValueRejected(rejected, file=str(path), setting=join(*key), reason=first.reason_text("en"))
        changed = text != original
        if changed:
            locked.write(text)
    return EditResult(file=path, changed=changed, previous=previous)


@contextlib.contextmanager
def _locked(scope: Scope, workspace: Path, *, create: bool) -> Iterator[LockedConfigFile | None]:
    if scope is Scope.WORKSPACE:
        with locked_workspace_file(workspace, create=create) as locked:
            yield locked
        return
    path = user_config_file()
    if not create and not path.parent.is_dir():  # nothing to remove, and no directory made for nothing
        yield None
        return
    with locked_user_file(path) as locked:
        yield locked


def _edited(original: str | None, key: KeyPath, value: Any, path: Path) -> str:
    """``original`` with ``key`` set to ``value`` (removed for ``None``), its comments and layout kept."""
    if len(key) == 3 and key[0] == "capabilities" and key[2] == "disclosure":
        chosen = INHERIT if value is None else value
        if isinstance(chosen, str):  # anything else is the checker's to refuse, below
            return capability_text(original, key[1], chosen, path)[0]
    doc = _parse(original, path)
    table: Any = doc
    added: KeyPath | None = None
    for depth, part in enumerate(key[:-1]):
        inner = table.get(part)
        if inner is None:
            if value is None:
                return tomlkit.dumps(doc) if original is None else original
            inner = tomlkit.table()
            table[part] = inner
            added = added or key[: depth + 1]
        elif not isinstance(inner, Table | InlineTable):
            raise ConfigEditRefused(file=str(path), detail=f"'{join(*key[: depth + 1])}' is not a table")
        table = inner
    if value is None:
        if key[-1] in table:
            del table[key[-1]]
    else:
        table[key[-1]] = value
    text = tomlkit.dumps(doc)
    return _set_off(text, added) if added is not None else text


def _added_problems(scope: Scope, workspace: Path, path: Path, original: str | None, text: str) -> list[ConfigIssue]:
    """The checker's findings with ``text`` in the file that it does not report with ``original``: both files
    combined as a session combines them, so a cross-file rule (``min_samples`` at most ``window``) counts."""
    before = {_shape(issue) for issue in _issues(scope, workspace, path, original)}
    return [issue for issue in _issues(scope, workspace, path, text) if _shape(issue) not in before]


def _issues(scope: Scope, workspace: Path, path: Path, text: str | None) -> Sequence[ConfigIssue]:
    edited = None if text is None else _layer(text, str(path), tighten_only=scope is Scope.WORKSPACE)
    if scope is Scope.WORKSPACE:
        layers = [read_layer(user_config_file()), edited]
    else:
        layers = [edited, read_layer(workspace_config_file(workspace), tighten_only=True)]
    return combine([layer for layer in layers if layer is not None]).issues


def _layer(text: str, file: str, *, tighten_only: bool) -> CleanLayer:
    found = parse_config(text, file)
    layer = unusable_layer(found) if isinstance(found, ConfigIssue) else clean_layer(found.data, file, DEFAULT_CAPS)
    return attrs.evolve(layer, tighten_only=tighten_only)


def _shape(issue: ConfigIssue) -> tuple[object, ...]:
    """An issue without its line and column, which an edit above it moves."""
    return (issue.file, issue.path, issue.code, issue.reason, tuple(sorted(issue.params.items())))
