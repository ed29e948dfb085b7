"""Configuration files: the per-user and per-workspace ``config.toml`` (SPEC §4, §5).

:func:`load_config` gives the effective configuration (workspace wins per
key), every problem as a :class:`ConfigIssue` with file, line and key path,
and the config revision. :func:`set_capability` edits the workspace file in
place. :func:`inspect_config` is ``config show`` and ``config check`` as data,
:func:`init_config` writes the commented starter file, and
:func:`config_schema` is the JSON Schema; the schema file and
``docs/config.md`` are generated from the model by
``python -m ptc_plus.config.reference`` (ADR 0062).
"""

from __future__ import annotations

from ptc_plus.config.editor import INHERIT, set_capability
from ptc_plus.config.errors import CapabilityIdentityInvalid, ConfigFileExists, DisclosureValueInvalid
from ptc_plus.config.init import init_config
from ptc_plus.config.issues import ConfigIssue
from ptc_plus.config.keys import toml_literal
from ptc_plus.config.loader import LoadedConfig, combine, load_config, read_layer
from ptc_plus.config.model import (
    CONFIG_VERSION,
    DEFAULT_CAPS,
    CapabilityChoice,
    ContextSection,
    Disclosure,
    GateSection,
    ManagementSection,
    Presentation,
    PtcConfig,
    RuntimeCaps,
    RuntimeSection,
    StatisticsSection,
)
from ptc_plus.config.paths import WORKSPACE_DIR, Scope, user_config_file, workspace_config_file
from ptc_plus.config.report import ConfigReport, inspect_config, problem_line
from ptc_plus.config.revision import config_revision
from ptc_plus.config.schema import config_schema, schema_uri
from ptc_plus.config.starter import starter_text
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
    "ConfigFileExists",
    "ConfigIssue",
    "ConfigReport",
    "ContextSection",
    "Disclosure",
    "DisclosureValueInvalid",
    "GateBlocker",
    "GateSection",
    "LoadedConfig",
    "ManagementSection",
    "Presentation",
    "PtcConfig",
    "RuntimeCaps",
    "RuntimeSection",
    "SandboxPolicy",
    "Scope",
    "StatisticsSection",
    "combine",
    "config_revision",
    "config_schema",
    "init_config",
    "inspect_config",
    "load_config",
    "problem_line",
    "read_layer",
    "schema_uri",
    "set_capability",
    "starter_text",
    "toml_literal",
    "user_config_file",
    "workspace_config_file",
]
