"""Every config key as the model declares it: the one source for the starter file, the reference and the schema.

Types and defaults come from the attrs classes of :mod:`.model`, the words
from their field metadata (``help``, ``env``, ``tighten_only``, ``limits``),
and a ``[runtime]`` limit's maximum from :data:`~.model.DEFAULT_CAPS`. A key
added to the model appears in all three without further edits; one added
without ``help`` fails :func:`config_keys`.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any, get_args, get_origin

import attrs
import orjson

from ptc_plus.config.keypath import toml_key
from ptc_plus.config.model import (
    DEFAULT_CAPS,
    ENV,
    EXAMPLE,
    HELP,
    LIMITS,
    TIGHTEN_ONLY,
    USER_ONLY,
    CapabilityChoice,
    ContextSection,
    GateSection,
    ManagementSection,
    McpSection,
    McpServer,
    PtcConfig,
    ReplSection,
    RuntimeSection,
    StatisticsSection,
    WorkflowSection,
)

IDENTITY = "<identity>"
"""Stands for a capability identity in the key path ``capabilities."<identity>".disclosure``."""
SERVER = "<name>"
"""Stands for a server name in ``mcp.servers.<name>.command`` and ``mcp.consent."<workspace>".<name>``."""
WORKSPACE_PATH = "<workspace>"
"""Stands for a workspace's real path in ``mcp.consent."<workspace>".<name>``."""
SERVERS_TABLE = f"mcp.servers.{SERVER}"
CONSENT_TABLE = f'mcp.consent."{WORKSPACE_PATH}"'

SECTION_HELP: Mapping[str, str] = {
    "gate": "Who gets PTC at all; an environment variable of the same meaning wins over each key.",
    "management": "Capability management: which contracts the model sees in full, within a token budget.",
    "capabilities": "Explicit disclosure choices, one entry per capability identity (source:member).",
    "statistics": "Whether usage statistics vote in new plans.",
    "context": "Token budgets of discovery answers, compaction recovery and result previews.",
    "runtime": "How programs run: presentation, sandbox policy and limits.",
    "mcp": "MCP servers used as capability sources, and the user's consent to servers from workspace files.",
    "repl": "The stateful REPL (runtime.kernel = session): user bindings loaded into every cell.",
    "workflow": "Caps of workflow scripts and Ralph (child agents); a workspace file may only lower them.",
}
"""One line per section, in file order."""

_SECTION_CLASSES: Mapping[str, type[Any]] = {
    "gate": GateSection,
    "management": ManagementSection,
    "capabilities": CapabilityChoice,
    "statistics": StatisticsSection,
    "context": ContextSection,
    "runtime": RuntimeSection,
    "repl": ReplSection,
    "workflow": WorkflowSection,
}


@attrs.frozen(kw_only=True)
class ConfigKey:
    """One key: where it lives, what it accepts, what it means.

    :ivar section: its table (``""`` for the top-level ``version``).
    :ivar kind: ``boolean``, ``integer``, ``number``, ``string``, ``array-of-strings``, ``table-of-strings``,
        ``scalar-or-array`` (a ``[gate]`` key, read like its environment variable) or ``choice``.
    :ivar default: the value when no file sets it; ``None``: not set.
    :ivar limits: JSON Schema bounds (``minimum``, ``exclusiveMinimum``, ``maximum``).
    """

    section: str
    name: str
    kind: str
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    env: str | None = None
    tighten_only: bool = False
    limits: Mapping[str, float] = attrs.field(factory=dict)
    example: Any = None
    """What to show for a key that is not set by default (``None``: nothing)."""
    table: str = ""
    """The key's table when it is not the section itself (``mcp.servers.<name>``); ``""``: the section."""
    user_only: bool = False
    """Only the user file may set it (``[mcp.consent]``, ADR 0071; ``[repl] bindings``, ADR 0086)."""

    @property
    def path(self) -> str:
        if not self.section:
            return self.name
        table = f'capabilities."{IDENTITY}"' if self.section == "capabilities" else self.table or self.section
        return f"{table}.{self.name}"

    @property
    def templated(self) -> bool:
        """Whether the path holds a placeholder (one key per capability, server or workspace) rather than a fixed
        key of its section."""
        return self.section == "capabilities" or bool(self.table)


def config_keys() -> tuple[ConfigKey, ...]:
    """Every key in file order: ``version``, then each section's keys in model order."""
    keys = [_key("", attrs.fields_dict(PtcConfig)["version"], PtcConfig)]
    for section, kind in _SECTION_CLASSES.items():
        keys.extend(_key(section, field, kind) for field in attrs.fields(kind))
    keys.extend(attrs.evolve(_key("mcp", field, McpServer), table=SERVERS_TABLE) for field in attrs.fields(McpServer))
    consent = attrs.fields_dict(McpSection)["consent"]
    keys.append(
        ConfigKey(
            section="mcp",
            name=SERVER,
            kind="string",
            default=None,
            help=consent.metadata[HELP],
            table=CONSENT_TABLE,
            user_only=True,
        )
    )
    return tuple(keys)


def _key(section: str, field: attrs.Attribute[Any], owner: type[Any]) -> ConfigKey:
    help_text = field.metadata.get(HELP)
    if not help_text:
        raise ValueError(f"config key {section}.{field.name} has no help text in the model")
    kind, choices = _kind(section, attrs.resolve_types(owner) and attrs.fields_dict(owner)[field.name].type)
    limits = dict(field.metadata.get(LIMITS, {}))
    if section == "runtime" and field.name in attrs.fields_dict(type(DEFAULT_CAPS)):
        limits["maximum"] = getattr(DEFAULT_CAPS, field.name)
    default: Any = field.default
    if isinstance(default, attrs.Factory):  # type: ignore[arg-type]  # attrs.Factory is a class at runtime
        default = default.factory()
    default = None if default is attrs.NOTHING else plain_value(default)
    return ConfigKey(
        section=section,
        name=field.name,
        kind=kind,
        default=default,
        help=help_text,
        choices=choices,
        env=field.metadata.get(ENV),
        tighten_only=bool(field.metadata.get(TIGHTEN_ONLY)),
        user_only=bool(field.metadata.get(USER_ONLY)),
        limits=limits,
        example=field.metadata.get(EXAMPLE),
    )


def _kind(section: str, annotation: Any) -> tuple[str, tuple[str, ...]]:
    if section == "gate":
        return "scalar-or-array", ()
    if get_origin(annotation) is Mapping:
        return "table-of-strings", ()
    args = [arg for arg in get_args(annotation) if arg is not type(None)]
    if args and get_origin(annotation) is not tuple:
        annotation = args[0]  # ``X | None``: None means "not set", not a value a file can write
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return "choice", tuple(str(member.value) for member in annotation)
    if annotation is bool:
        return "boolean", ()
    if annotation is int:
        return "integer", ()
    if annotation is float:
        return "number", ()
    if annotation is str:
        return "string", ()
    if get_origin(annotation) is tuple:
        return "array-of-strings", ()
    raise ValueError(f"no config kind for {annotation!r}")


def plain_value(value: Any) -> Any:
    """A default as TOML and JSON see it: enum members by value, tuples as lists."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple):
        return [plain_value(item) for item in value]
    if isinstance(value, Mapping):
        return {key: plain_value(item) for key, item in value.items()}
    return value


def toml_literal(value: Any) -> str:
    """``value`` as TOML writes it (strings quoted, booleans lower-case, arrays bracketed)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(toml_literal(item) for item in value) + "]"
    if isinstance(value, Mapping):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{toml_key(key)} = {toml_literal(item)}" for key, item in value.items()) + " }"
    if isinstance(value, str):
        return orjson.dumps(value).decode()
    return repr(value)
