"""Configuration files: the per-user and per-workspace ``config.toml`` (SPEC §4, §5).

:func:`load_config` gives the effective configuration (workspace wins per
key), every problem as a :class:`ConfigIssue` with file and key path, and the
config revision. :func:`set_capability` edits the workspace file in place.
"""

from __future__ import annotations

from ptc_plus.config.editor import INHERIT, set_capability
from ptc_plus.config.errors import CapabilityIdentityInvalid, DisclosureValueInvalid
from ptc_plus.config.issues import ConfigIssue
from ptc_plus.config.loader import LoadedConfig, combine, load_config, read_layer
from ptc_plus.config.model import (
    CONFIG_VERSION,
    DEFAULT_CAPS,
    CapabilityChoice,
    Disclosure,
    GateSection,
    ManagementSection,
    Presentation,
    PtcConfig,
    RuntimeCaps,
    RuntimeSection,
    StatisticsSection,
)
from ptc_plus.config.paths import WORKSPACE_DIR, user_config_file, workspace_config_file
from ptc_plus.config.revision import config_revision
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
    "ConfigIssue",
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
    "StatisticsSection",
    "combine",
    "config_revision",
    "load_config",
    "read_layer",
    "set_capability",
    "user_config_file",
    "workspace_config_file",
]
