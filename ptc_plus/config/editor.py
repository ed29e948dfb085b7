"""Edit the workspace config file in place: comments and layout survive (ADR 0030).

Edits run under a lock of the ``.ptc-plus`` directory and land by atomic
replace beneath the workspace (:mod:`.workspace_file`), so a concurrent
reader sees the old file or the new one, never half of either, and no lock
file is left behind. A file that is not valid TOML is never rewritten: the
user fixes it by hand first, told in the loader's words (:mod:`.source`).
A table the edit adds is set off from its neighbours by a blank line.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import attrs
import tomlkit
import tomlkit.exceptions
from tomlkit.items import InlineTable, Table

from ptc_plus.config.errors import CapabilityIdentityInvalid, ConfigEditRefused, DisclosureValueInvalid
from ptc_plus.config.model import CONFIG_VERSION, Disclosure, is_well_formed_identity
from ptc_plus.config.paths import workspace_config_file
from ptc_plus.config.table_text import header_path, without_table
from ptc_plus.config.workspace_file import locked_workspace_file

INHERIT = "inherit"
"""Remove the explicit choice: the capability inherits from the user file, statistics or baseline."""


@attrs.frozen(kw_only=True)
class EditResult:
    """What :func:`set_capability` did: ``changed`` is false when the file already said so."""

    file: Path
    changed: bool
    previous: str | None


def set_capability(workspace: Path, identity: str, value: str) -> EditResult:
    """Set ``[capabilities."<identity>"] disclosure`` to ``full``/``on-demand``/``off``, or remove it (``inherit``).

    Idempotent: a second identical call leaves the file byte-for-byte alone.
    Raises :class:`CapabilityIdentityInvalid`, :class:`DisclosureValueInvalid`,
    :class:`ConfigSyntaxError` / :class:`ConfigUnreadable` (the file is not
    TOML or not readable: the loader's message, with line and column) or
    :class:`ConfigEditRefused` (``capabilities`` not a table, the workspace or
    ``.ptc-plus`` unusable, a write failed).
    """
    if not is_well_formed_identity(identity):
        raise CapabilityIdentityInvalid(identity=identity)
    if value != INHERIT and value not in {member.value for member in Disclosure}:
        raise DisclosureValueInvalid(value=value)
    path = workspace_config_file(workspace)
    with locked_workspace_file(workspace, create=value != INHERIT) as locked:
        found = locked.read() if locked is not None else None
        if locked is None or (found is None and value == INHERIT):
            return EditResult(file=path, changed=False, previous=None)
        original = found.text if found is not None else None
        text, previous = capability_text(original, identity, value, path)
        if original is not None and text == original:
            return EditResult(file=path, changed=False, previous=previous)
        locked.write(text)
    return EditResult(file=path, changed=True, previous=previous)


def capability_text(original: str | None, identity: str, value: str, path: Path) -> tuple[str, str | None]:
    """``original`` (``None``: no file yet) with ``identity``'s disclosure set to ``value`` (or removed, ``inherit``),
    its comments and layout kept; and the previous disclosure text. Shared by :func:`set_capability` and
    :func:`~.key_editor.set_config_value`, which call it under the file's lock."""
    doc = _parse(original, path)
    removes_table = value == INHERIT and _is_own_table(doc, identity)
    adds_table = _adds_table(doc, identity, value)
    previous = _apply(doc, identity, value, path)
    text = tomlkit.dumps(doc)
    if removes_table and original is not None and identity not in doc.get("capabilities", {}):
        text = _keep_neighbour_comments(original, ("capabilities", identity), text)
    if adds_table:
        text = _set_off(_keep_section_comments(original, text, ("capabilities", identity)), ("capabilities", identity))
    return text, previous


def _parse(text: str | None, path: Path) -> tomlkit.TOMLDocument:
    """``text`` as a tomlkit document; :mod:`.source` has already accepted it, so tomlkit's wording never shows."""
    if text is None:
        doc = tomlkit.document()
        doc["version"] = CONFIG_VERSION
        return doc
    try:
        return tomlkit.parse(text)
    except tomlkit.exceptions.TOMLKitError as exc:  # TOML tomllib accepts and tomlkit does not: not expected
        raise ConfigEditRefused(file=str(path), detail=str(exc)) from None


def _adds_table(doc: tomlkit.TOMLDocument, identity: str, value: str) -> bool:
    """Whether setting ``value`` creates a ``[capabilities."<identity>"]`` table with its own header."""
    caps: Any = doc.get("capabilities")
    return value != INHERIT and (caps is None or (isinstance(caps, Table) and identity not in caps))


def _set_off(text: str, path: tuple[str, ...]) -> str:
    """``text`` with a blank line before the header ``[path]`` and before the header that follows its table,
    where a key line directly precedes them (tomlkit packs a table it adds against its neighbours)."""
    lines = text.splitlines(keepends=True)
    headers = [index for index, line in enumerate(lines) if header_path(line) is not None]
    own = [index for index in headers if header_path(lines[index]) == path]
    if len(own) != 1:
        return text
    following = [index for index in headers if index > own[0]][:1]
    for index in sorted([*own, *following], reverse=True):
        above = lines[index - 1] if index > 0 else ""
        if above.strip() and not above.lstrip().startswith("#"):
            lines.insert(index, "\n")
    return "".join(lines)


def _keep_section_comments(original: str | None, text: str, path: tuple[str, ...]) -> str:
    """``text`` with the comment lines tomlkit left above the added ``[path]`` header moved back above the header
    that follows it, when the original had them directly above that header: they describe that section.

    tomlkit appends a new table after the last item of the table it belongs to, and the comment lines that
    opened the next section are part of that last item's trivia, so they end up above the new table.
    """
    if original is None:
        return text
    lines = text.splitlines(keepends=True)
    headers = [index for index, line in enumerate(lines) if header_path(line) is not None]
    own = [index for index in headers if header_path(lines[index]) == path]
    following = [index for index in headers if own and index > own[0]][:1]
    if len(own) != 1 or not following:
        return text
    end = own[0]
    while end > 0 and not lines[end - 1].strip():
        end -= 1
    start = end
    while start > 0 and lines[start - 1].lstrip().startswith("#"):
        start -= 1
    block = lines[start:end]
    if not block:
        return text
    before = original.splitlines(keepends=True)
    header = lines[following[0]]
    if header not in before or "".join(before[: before.index(header)]).endswith("".join(block)) is False:
        return text
    # The block goes, with the blank lines between it and the new header (the blank above it stays as the
    # separator); above the following header it is set off by a blank line, as it was.
    between = lines[own[0] : following[0]]
    if between and between[-1].strip():
        between.append("\n")
    return "".join(lines[:start] + between + block + lines[following[0] :])


def _apply(doc: tomlkit.TOMLDocument, identity: str, value: str, path: Path) -> str | None:
    """Change ``doc``; return the previous disclosure text (``None`` when there was none)."""
    caps: Any = doc.get("capabilities")
    if caps is not None and not isinstance(caps, Table | InlineTable):
        raise ConfigEditRefused(file=str(path), detail="'capabilities' is not a table")
    entry: Any = caps.get(identity) if caps is not None else None
    if entry is not None and not isinstance(entry, Table | InlineTable):
        raise ConfigEditRefused(file=str(path), detail=f"'capabilities.{identity}' is not a table")
    previous = entry.get("disclosure") if entry is not None else None
    previous_text = str(previous) if previous is not None else None
    if value == INHERIT:
        if caps is None or entry is None or previous is None:
            return previous_text
        del entry["disclosure"]
        if not entry:
            del caps[identity]
        # Only a table we could have created (no ``[capabilities]`` header of its own) goes away.
        if not caps and isinstance(caps, Table) and caps.is_super_table():
            del doc["capabilities"]
        return previous_text
    if previous_text == value:
        return previous_text
    if entry is not None:
        entry["disclosure"] = value
        return previous_text
    if caps is None:
        caps = tomlkit.table(is_super_table=True)
        doc["capabilities"] = caps
    new_entry = tomlkit.inline_table() if isinstance(caps, InlineTable) else tomlkit.table()
    new_entry["disclosure"] = value
    caps[identity] = new_entry
    return previous_text


def _is_own_table(doc: tomlkit.TOMLDocument, identity: str) -> bool:
    """Whether ``[capabilities."<identity>"]`` is a table with its own header (not inline, not dotted)."""
    caps: Any = doc.get("capabilities")
    entry: Any = caps.get(identity) if isinstance(caps, Table) else None
    return isinstance(entry, Table) and not entry.is_super_table()


def _keep_neighbour_comments(original: str, table: tuple[str, ...], edited: str) -> str:
    """``edited`` with ``table`` removed line-wise instead (:mod:`.table_text`), when that means the same TOML
    (so the comments of its neighbours stay where they were, ADR 0048)."""
    candidate = without_table(original, table)
    if candidate is None:
        return edited
    try:
        same = tomllib.loads(candidate) == tomllib.loads(edited)
    except tomllib.TOMLDecodeError:
        return edited
    return candidate if same else edited
