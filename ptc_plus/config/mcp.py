"""Which configured MCP servers may run in a workspace: the consent rule of ADR 0071.

A server whose program (``command``, ``args``, ``env`` or ``cwd``) comes, even
in part, from the workspace file is a *workspace server*: a repository one
clones must not start programs by itself, so it runs only when the user file
holds ``[mcp.consent."<workspace real path>"] <name> = "<fingerprint>"`` for
that workspace and exactly that definition. The fingerprint covers the four
keys that say what runs; ``timeout_s`` and ``enabled`` cannot start anything
and stay free. A user-file server runs wherever it is enabled.
"""

from __future__ import annotations

import enum
import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

import attrs

from hookspecs.serialization import canonical_bytes
from ptc_plus.config.errors import McpServerChanged, McpServerDisabled, McpServerNotTrusted
from ptc_plus.config.keypath import join
from ptc_plus.config.loader import LoadedConfig
from ptc_plus.config.model import McpServer
from ptc_plus.errors import PtcError

PROGRAM_KEYS = ("command", "args", "env", "cwd")
"""The keys of a server that say what program runs: the fingerprint's content, and what needs consent."""


class Refusal(enum.StrEnum):
    """Why a configured server does not run in this workspace."""

    DISABLED = "disabled"
    """``enabled = false``."""
    NOT_TRUSTED = "not-trusted"
    """A workspace server the user never allowed in this workspace."""
    CHANGED = "changed"
    """A workspace server allowed here once, whose program has changed since."""


_ERRORS: Mapping[Refusal, type[PtcError]] = {
    Refusal.DISABLED: McpServerDisabled,
    Refusal.NOT_TRUSTED: McpServerNotTrusted,
    Refusal.CHANGED: McpServerChanged,
}


@attrs.frozen(kw_only=True)
class RefusedServer:
    """A configured server that does not run here, and why.

    :ivar file: the file that defined (part of) its program: the workspace file for a workspace server.
    :ivar fingerprint: its definition's fingerprint (what ``ptc-plus mcp trust`` records).
    """

    name: str
    reason: Refusal
    file: str
    fingerprint: str
    workspace: str

    def to_error(self) -> PtcError:
        """The refusal as an error (PTC-4310 disabled, PTC-4311 not trusted, PTC-4312 changed since trusted)."""
        return _ERRORS[self.reason](name=self.name, file=self.file, workspace=self.workspace)

    def message(self, lang: str | None = None) -> str:
        """The localized reason, naming the command that would let it run."""
        return self.to_error().message(lang)

    @property
    def code(self) -> str:
        return self.to_error().code


@attrs.frozen(kw_only=True)
class McpServers:
    """The configured MCP servers of one workspace, split by the consent rule (:func:`mcp_servers`).

    :ivar usable: the servers to start, by name (sorted): enabled, and consented where needed.
    :ivar refused: the others, by name, each with its reason (for ``/capabilities`` and ``ptc-plus mcp list``).
    :ivar workspace_servers: names whose program comes from the workspace file (consent needed).
    """

    usable: Mapping[str, McpServer]
    refused: tuple[RefusedServer, ...] = ()
    workspace_servers: frozenset[str] = frozenset()


def fingerprint(server: McpServer) -> str:
    """``sha256:<hex>`` of the program a definition starts (``command``, ``args``, ``env``, ``cwd``)."""
    content = {"command": server.command, "args": list(server.args), "env": dict(server.env), "cwd": server.cwd}
    return "sha256:" + hashlib.sha256(canonical_bytes(content)).hexdigest()


def consent_key(workspace: Path) -> str:
    """The workspace as consent names it: its real path (symlinks resolved), so another path to it counts too."""
    return os.path.realpath(workspace)


def server_cwd(server: McpServer, workspace: Path, *, from_workspace: bool) -> Path:
    """The directory a server starts in: ``cwd`` relative to ``workspace``; when unset, where it belongs.

    A workspace server (``from_workspace``) starts in the workspace. A user-file server is the user's
    program, not the repository's: it starts in the user's home (``/`` if there is none), so a
    ``python -m X`` of the user never runs a workspace's ``X.py`` (ADR 0093).
    """
    if server.cwd is not None:
        return workspace / os.path.expanduser(server.cwd)
    if from_workspace:
        return workspace
    home = Path(os.path.expanduser("~"))
    return home if home.is_absolute() and home.is_dir() else Path("/")


def is_workspace_server(loaded: LoadedConfig, name: str) -> bool:
    """Whether any program key of server ``name`` was set by the workspace file."""
    if loaded.workspace_file is None:
        return False
    prefixes = tuple(join("mcp", "servers", name, key) for key in PROGRAM_KEYS)
    return any(
        file == loaded.workspace_file and (path in prefixes or path.startswith(tuple(p + "." for p in prefixes)))
        for path, file in loaded.origins.items()
    )


def mcp_servers(loaded: LoadedConfig, workspace: Path) -> McpServers:
    """The servers to use in ``workspace`` and the refused ones with their reasons (ADR 0071).

    Pure over ``loaded`` (the effective config of ``workspace``, as :func:`.load_config` gives it): the
    consents it reads are the user file's (a workspace file's ``[mcp.consent]`` is dropped at load).
    Servers the config could not read at all (a missing ``command``) are config issues, not listed here.
    """
    place = consent_key(workspace)
    consents = loaded.config.mcp.consent.get(place, {})
    usable: dict[str, McpServer] = {}
    refused: list[RefusedServer] = []
    from_workspace: set[str] = set()
    for name, server in sorted(loaded.config.mcp.servers.items()):
        mark = fingerprint(server)
        workspace_owned = is_workspace_server(loaded, name)
        file = loaded.workspace_file if workspace_owned and loaded.workspace_file else _file_of(loaded, name)
        reason: Refusal | None = None
        if workspace_owned:
            from_workspace.add(name)
        if not server.enabled:  # first: a server that never starts needs no consent to be talked about
            reason = Refusal.DISABLED
        elif workspace_owned and consents.get(name) is None:
            reason = Refusal.NOT_TRUSTED
        elif workspace_owned and consents.get(name) != mark:
            reason = Refusal.CHANGED
        if reason is None:
            usable[name] = server
        else:
            refused.append(RefusedServer(name=name, reason=reason, file=file, fingerprint=mark, workspace=place))
    return McpServers(usable=usable, refused=tuple(refused), workspace_servers=frozenset(from_workspace))


def _file_of(loaded: LoadedConfig, name: str) -> str:
    """The file that set ``command`` of server ``name`` (the key every definition has)."""
    return loaded.origins.get(join("mcp", "servers", name, "command"), "")
