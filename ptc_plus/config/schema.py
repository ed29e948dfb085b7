"""The JSON Schema of a config file, generated from the model, and where the packaged copy lives.

The schema is for editors (Taplo / Even Better TOML read the ``#:schema``
line :mod:`.starter` writes) and for anyone validating a file without this
plugin. It is written as Draft 7, the newest draft those editors support. It
describes what a file may hold, not the deployment: a ``[runtime]`` limit's
``maximum`` is the default cap, and the tighten-only rule (which depends on
the other file) is in the descriptions only. :func:`.reference.main`
regenerates :data:`SCHEMA_FILE`; a test keeps it equal to :func:`config_schema`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ptc_plus.config.keys import CONSENT_TABLE, SECTION_HELP, SERVERS_TABLE, ConfigKey, config_keys
from ptc_plus.config.model import CONFIG_VERSION, SERVER_NAME

SCHEMA_FILE = Path(__file__).with_name("config.schema.json")
"""The schema shipped in the package (the wheel carries every file under ``ptc_plus/``)."""


def schema_uri() -> str:
    """A ``file://`` URI of the installed :data:`SCHEMA_FILE`: resolves offline, and matches the installed version."""
    return SCHEMA_FILE.resolve().as_uri()


def config_schema() -> dict[str, Any]:
    """The schema of one config file (user or workspace), as a JSON-ready dict."""
    keys = config_keys()
    properties: dict[str, Any] = {}
    for key in keys:
        if not key.section:
            properties[key.name] = {**_value(key), "enum": [CONFIG_VERSION]}
    for section, description in SECTION_HELP.items():
        members = {key.name: _value(key) for key in keys if key.section == section}
        table = {"type": "object", "properties": members, "additionalProperties": False}
        if section == "capabilities":
            entry = {**table, "required": sorted(members)}
            properties[section] = {"description": description, "type": "object", "additionalProperties": entry}
        elif section == "mcp":
            properties[section] = {"description": description, **_mcp(keys)}
        else:
            properties[section] = {"description": description, **table}
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "PTC Plus config.toml",
        "description": "The user or workspace config file of PTC Plus; see docs/config.md.",
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }


def _mcp(keys: tuple[ConfigKey, ...]) -> dict[str, Any]:
    """``[mcp]``: ``servers.<name>`` tables (``command`` required) and the user's ``consent`` (ADR 0071)."""
    server = {key.name: _value(key) for key in keys if key.table == SERVERS_TABLE}
    (consent,) = (key for key in keys if key.table == CONSENT_TABLE)
    name = {"pattern": SERVER_NAME.pattern.join("^$")}
    fingerprint = {**_value(consent), "pattern": "^sha256:"}
    return {
        "type": "object",
        "properties": {
            "servers": {
                "type": "object",
                "propertyNames": name,
                "additionalProperties": {
                    "type": "object",
                    "properties": server,
                    "required": ["command"],
                    "additionalProperties": False,
                },
            },
            "consent": {
                "type": "object",
                "propertyNames": {"pattern": "^/"},
                "additionalProperties": {
                    "type": "object",
                    "propertyNames": name,
                    "additionalProperties": fingerprint,
                },
            },
        },
        "additionalProperties": False,
    }


def _value(key: ConfigKey) -> dict[str, Any]:
    schema: dict[str, Any] = {"description": _description(key)}
    if key.kind == "choice":
        schema.update(type="string", enum=list(key.choices))
    elif key.kind == "array-of-strings":
        schema.update(type="array", items={"type": "string"})
        if not key.table:  # a list of identities; a server's arguments may repeat (``-v -v``)
            schema["uniqueItems"] = True
    elif key.kind == "table-of-strings":
        schema.update(type="object", additionalProperties={"type": "string"})
    elif key.kind == "scalar-or-array":
        schema.update(type=["string", "integer", "number", "boolean", "array"], items={"type": "string"})
    else:
        schema["type"] = key.kind
    schema.update(key.limits)
    if key.default is not None:
        schema["default"] = key.default
    return schema


def _description(key: ConfigKey) -> str:
    text = key.help
    if key.env:
        text += f" (environment {key.env} wins)"
    if key.tighten_only:
        text += " A workspace file may only tighten it."
    if key.user_only:
        text += " Only the user file may set it."
    return text
