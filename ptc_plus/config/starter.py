"""The commented starter file ``config init`` writes.

Every section is there with its header, and every key commented out at its
default (or, for a key that is not set by default, at an example value) with
a one-line explanation, so uncommenting a line gives a valid setting in the
right table. The user file's first line is the ``#:schema`` directive Taplo
and Even Better TOML read; it points at the schema installed with this
package (ADR 0062). The workspace file is meant to be committed, and that
path is this machine's: it says where the schema is instead of pointing at it.
"""

from __future__ import annotations

from ptc_plus.config.keypath import toml_key
from ptc_plus.config.keys import SECTION_HELP, ConfigKey, config_keys, toml_literal
from ptc_plus.config.model import CONFIG_VERSION
from ptc_plus.config.paths import Scope
from ptc_plus.config.schema import schema_uri

_INTRO = {
    Scope.USER: "PTC Plus user config: applies in every workspace; a workspace file wins per key.",
    Scope.WORKSPACE: "PTC Plus workspace config: wins over the user file per key, but only tightens what protects you.",
}

_SCHEMA_HINT = (
    "# Editors that read `#:schema` (Taplo, Even Better TOML): the schema ships with PTC Plus as "
    "ptc_plus/config/config.schema.json."
)
"""Where the schema is, for a file that is committed (a ``#:schema`` path would be this machine's)."""

_CAPABILITY_EXAMPLE = '# "host:read_file" = { disclosure = "on-demand" }'
_MCP_EXAMPLE = [
    "# One server per name (`ptc-plus mcp add NAME -- COMMAND ARGS...` writes it); keys: command, args, env,",
    "# cwd, timeout_s, enabled. A server from a workspace file runs only after `ptc-plus mcp trust NAME`.",
    '# servers = { time = { command = "mcp-server-time", args = ["--local-timezone", "UTC"] } }',
]


def starter_text(scope: Scope, schema: str | None = None) -> str:
    """The starter file for ``scope``; ``schema`` replaces the user file's ``#:schema`` target (default
    :func:`.schema_uri`). The workspace file carries no machine path: a teammate's checkout would not have it."""
    keys = config_keys()
    head = [f"#:schema {schema or schema_uri()}"] if scope is Scope.USER or schema is not None else []
    lines = [
        *head,
        f"# {_INTRO[scope]}",
        "# Every key below is commented out at its default. Reference: docs/config.md;",
        "# `ptc-plus config check` finds mistakes, `ptc-plus config show` prints what is in force.",
        *([] if head else [_SCHEMA_HINT]),
        "",
        f"version = {CONFIG_VERSION}",
    ]
    for section, description in SECTION_HELP.items():
        lines += ["", f"# {description}", f"[{section}]"]
        members = [key for key in keys if key.section == section]
        if section == "capabilities":
            lines += [f"# {member.help}" for member in members]
            lines.append(_CAPABILITY_EXAMPLE)
            continue
        if section == "mcp":
            lines += _MCP_EXAMPLE
            continue
        for key in members:
            lines += [f"# {_explanation(key, scope)}", f"# {toml_key(key.name)} = {_shown(key)}"]
    return "\n".join(lines) + "\n"


def _explanation(key: ConfigKey, scope: Scope) -> str:
    text = key.help
    if key.default is None and not key.env:  # a [gate] key's help names the gate's own default
        text += " (not set by default)"
    if "maximum" in key.limits and key.section == "runtime":
        text += f" (at most {toml_literal(key.limits['maximum'])})"
    if key.env:
        text += f"; {key.env} wins"
    if key.tighten_only and scope is Scope.WORKSPACE:
        text += "; this file may only tighten it"
    if key.user_only and scope is Scope.WORKSPACE:
        text += "; only your user file's counts"
    return text


def _shown(key: ConfigKey) -> str:
    return toml_literal(key.default if key.default is not None else key.example)
