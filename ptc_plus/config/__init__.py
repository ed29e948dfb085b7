"""Configuration files: the per-user and per-workspace ``config.toml``.

:func:`load_config` gives the effective configuration (workspace wins per
key), every problem as a :class:`ConfigIssue` with file, line and key path,
and the config revision. :func:`set_capability` edits the workspace file in
place; :func:`set_config_value` edits one key of either file only if it still
holds what the caller saw (the settings page, ADR 0129). :func:`inspect_config`
is ``config show`` and ``config check`` as data,
:func:`init_config` writes the commented starter file, and
:func:`config_schema` is the JSON Schema; the schema file and
``docs/config.md`` are generated from the model by
``python -m ptc_plus.config.reference`` (ADR 0062). :func:`mcp_servers` says
which ``[mcp.servers]`` may run in a workspace (the consent rule, ADR 0071).
:func:`load_bindings` reads the REPL's ``[repl] bindings`` (ADR 0082).
"""

from __future__ import annotations

from ptc_plus.config.bindings import UserBindings, bindings_fingerprint, load_bindings
from ptc_plus.config.editor import INHERIT, set_capability
from ptc_plus.config.effective import EffectiveKey, effective_keys
from ptc_plus.config.errors import (
    CapabilityIdentityInvalid,
    ConfigEditConflict,
    ConfigError,
    ConfigFileExists,
    DisclosureValueInvalid,
    McpEnvInvalid,
    McpServerExists,
    McpServerNameInvalid,
    McpServerUnknown,
)
from ptc_plus.config.init import init_config
from ptc_plus.config.issues import ConfigIssue, ConfigValueRejected
from ptc_plus.config.key_editor import KeyPath, config_file, file_values, same_value, set_config_value, value_at
from ptc_plus.config.keys import ConfigKey, config_keys, toml_literal
from ptc_plus.config.loader import LoadedConfig, combine, load_config, read_layer
from ptc_plus.config.mcp import McpServers, Refusal, RefusedServer, fingerprint, mcp_servers, server_cwd
from ptc_plus.config.mcp_editor import (
    McpEdit,
    add_server,
    check_server_name,
    record_consent,
    remove_server,
    require_readable,
)
from ptc_plus.config.model import (
    CONFIG_VERSION,
    DEFAULT_CAPS,
    CapabilityChoice,
    ContextSection,
    Disclosure,
    GateSection,
    ManagementSection,
    McpSection,
    McpServer,
    Presentation,
    PtcConfig,
    ReplSection,
    RuntimeCaps,
    RuntimeSection,
    StatisticsSection,
    WorkflowSection,
    is_well_formed_identity,
    server_unit,
    unit_server,
)
from ptc_plus.config.paths import WORKSPACE_DIR, Scope, user_config_file, workspace_config_file
from ptc_plus.config.report import ConfigFile, ConfigReport, inspect_config, problem_line
from ptc_plus.config.revision import config_revision
from ptc_plus.config.schema import config_schema, schema_uri
from ptc_plus.config.starter import starter_text
from ptc_plus.config.switch_editor import set_management_enabled
from ptc_plus.config.validate import WHOLE_FILE, GateBlocker
from ptc_plus.sandbox_policy import SandboxPolicy

__all__ = [
    "CONFIG_VERSION",
    "DEFAULT_CAPS",
    "INHERIT",
    "WHOLE_FILE",
    "WORKSPACE_DIR",
    "CapabilityChoice",
    "CapabilityIdentityInvalid",
    "ConfigEditConflict",
    "ConfigError",
    "ConfigFile",
    "ConfigFileExists",
    "ConfigIssue",
    "ConfigKey",
    "ConfigReport",
    "ConfigValueRejected",
    "ContextSection",
    "Disclosure",
    "DisclosureValueInvalid",
    "EffectiveKey",
    "GateBlocker",
    "GateSection",
    "KeyPath",
    "LoadedConfig",
    "ManagementSection",
    "McpEdit",
    "McpEnvInvalid",
    "McpSection",
    "McpServer",
    "McpServerExists",
    "McpServerNameInvalid",
    "McpServerUnknown",
    "McpServers",
    "Presentation",
    "PtcConfig",
    "Refusal",
    "RefusedServer",
    "ReplSection",
    "RuntimeCaps",
    "RuntimeSection",
    "SandboxPolicy",
    "Scope",
    "StatisticsSection",
    "UserBindings",
    "WorkflowSection",
    "add_server",
    "bindings_fingerprint",
    "check_server_name",
    "combine",
    "config_file",
    "config_keys",
    "config_revision",
    "config_schema",
    "effective_keys",
    "file_values",
    "fingerprint",
    "init_config",
    "inspect_config",
    "is_well_formed_identity",
    "load_bindings",
    "load_config",
    "mcp_servers",
    "problem_line",
    "read_layer",
    "record_consent",
    "remove_server",
    "require_readable",
    "same_value",
    "schema_uri",
    "server_cwd",
    "server_unit",
    "set_capability",
    "set_config_value",
    "set_management_enabled",
    "starter_text",
    "toml_literal",
    "unit_server",
    "user_config_file",
    "value_at",
    "workspace_config_file",
]
