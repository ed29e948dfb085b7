"""Errors of the configuration files (codes PTC-4000..PTC-4099)."""

from __future__ import annotations

from ptc_plus.errors import PtcError


class ConfigError(PtcError):
    """Root of configuration errors."""

    code = "PTC-4000"


class ConfigUnreadable(ConfigError):
    """A config file exists but cannot be read (params: ``file``, ``detail``)."""

    code = "PTC-4001"


class ConfigSyntaxError(ConfigError):
    """A config file is not valid TOML (params: ``file``, ``detail``)."""

    code = "PTC-4002"


class ConfigVersionUnsupported(ConfigError):
    """A config file declares a format version this plugin cannot read (``file``, ``found``, ``supported``)."""

    code = "PTC-4003"


class ConfigTooDeep(ConfigError):
    """A config file nests tables, keys or values deeper than any config does (params: ``file``, ``limit``)."""

    code = "PTC-4004"


class ConfigValueInvalid(ConfigError):
    """One key of one file is invalid (params: ``file``, ``path``, ``reason``)."""

    code = "PTC-4010"


class ConfigInvalid(ConfigError):
    """A strict caller asked for a configuration without problems (``count``, ``first``)."""

    code = "PTC-4011"


class ConfigEditRefused(ConfigError):
    """The workspace file cannot be edited safely (params: ``file``, ``detail``)."""

    code = "PTC-4020"


class DisclosureValueInvalid(ConfigError):
    """``set_capability`` got a value other than full/on-demand/off/inherit (param: ``value``)."""

    code = "PTC-4021"


class CapabilityIdentityInvalid(ConfigError):
    """``set_capability`` got an unusable identity (param: ``identity``)."""

    code = "PTC-4022"


class ConfigFileExists(ConfigError):
    """``config init`` would replace an existing file and was not told to (param: ``file``)."""

    code = "PTC-4023"


class ConfigEditConflict(ConfigError):
    """A save from a page that loaded the file earlier: the key no longer holds what the page showed, so
    saving would lose an edit made elsewhere (params: ``file``, ``setting``, ``theirs``: the value now, as TOML,
    ``""`` when not set)."""

    code = "PTC-4024"


class McpConfigError(ConfigError):
    """Root of the ``[mcp.servers]`` and ``ptc-plus mcp`` errors (PTC-4300..PTC-4399, ADR 0071)."""

    code = "PTC-4300"


class McpServerNameInvalid(McpConfigError):
    """A server name that is not ``[A-Za-z0-9_-]+`` (param: ``name``)."""

    code = "PTC-4301"


class McpServerUnknown(McpConfigError):
    """No server of that name in the file or config looked at (params: ``name``, ``file``)."""

    code = "PTC-4302"


class McpServerExists(McpConfigError):
    """``mcp add`` of a name the file already defines differently (params: ``name``, ``file``)."""

    code = "PTC-4303"


class McpEnvInvalid(McpConfigError):
    """An ``--env`` value that is not ``KEY=VALUE`` (param: ``value``)."""

    code = "PTC-4304"


class McpServerDisabled(McpConfigError):
    """A configured server with ``enabled = false`` (params: ``name``, ``file``, ``workspace``)."""

    code = "PTC-4310"


class McpServerNotTrusted(McpConfigError):
    """A workspace server the user never allowed in this workspace (params: ``name``, ``file``, ``workspace``)."""

    code = "PTC-4311"


class McpServerChanged(McpConfigError):
    """A workspace server whose program changed since the user allowed it (``name``, ``file``, ``workspace``)."""

    code = "PTC-4312"
