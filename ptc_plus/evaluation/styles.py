"""Per style: which plugins the host loads, the workspace config, and the run's own user directories.

- Native styles load no PTC Plus: the host with no entry points at all
  (``load_entry_points=False``) and, for tool search, only
  :class:`~ptc_plus.evaluation.tool_search.ToolSearchPlugin`.
- Code styles load :mod:`ptc_plus.plugin` explicitly (never another installed
  plugin) with a workspace ``.ptc-plus/config.toml``: management off for PTC,
  on for PTC Plus (the default budget unless a run overrides it). Statistics
  stay on and are kept to the workspace (``share_with_user = false``), so the
  mature style's statistics are exactly the warm-up's store copied in.
- The plugin finds the user config and the user statistics through the process
  environment (``XDG_CONFIG_HOME``/``HOME``, :mod:`ptc_plus.config.paths`,
  :func:`ptc_plus.statistics.user_store`), and its gate reads ``PTC_*``
  variables: :func:`isolated_environment` points the first two at the run's
  own directory and removes the gate's variables while a run lasts, then puts
  the environment back, so no run reads the developer's settings or another
  run's statistics.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import attrs

import ptc_plus.plugin
from ptc_plus.capabilities import CACHE_DIR_ENV, cache_directory
from ptc_plus.config import workspace_config_file
from ptc_plus.evaluation.task import Style
from ptc_plus.evaluation.tool_search import ToolSearchPlugin
from ptc_plus.gate import ENV_VARS

SEARCH_STYLES = frozenset({Style.TOOL_SEARCH, Style.TOOL_SEARCH_MATURE})
NATIVE_STYLES = frozenset({Style.NATIVE, Style.NATIVE_SEQUENTIAL, *SEARCH_STYLES})
CODE_STYLES = frozenset({Style.PTC, Style.PTC_SEARCH, Style.PTC_PLUS_COLD, Style.PTC_PLUS_MATURE, Style.PTC_PLUS_BOTH})
MANAGED_STYLES = frozenset({Style.PTC_SEARCH, Style.PTC_PLUS_COLD, Style.PTC_PLUS_MATURE, Style.PTC_PLUS_BOTH})
STATISTICS_STYLES = frozenset({Style.PTC_PLUS_MATURE, Style.TOOL_SEARCH_MATURE})
"""Styles that read the warm-up's statistics (PTC Plus's plan, tool search's always-loaded tools)."""

GATE_VARIABLES = tuple(sorted(ENV_VARS.values()))
"""The environment variables the gate reads (``PTC_MODE``, ...): none may leak into a run."""


@attrs.frozen(kw_only=True)
class StyleSetup:
    """How one style's host is built.

    :ivar plugins: handed to :class:`~hookspecs.reference.ReferenceHost` (entry points never load).
    :ivar config: the workspace config file's text, ``None`` for none.
    """

    plugins: tuple[object, ...]
    config: str | None


@attrs.frozen(kw_only=True)
class Parameters:
    """PTC Plus settings a run sets in its workspace config; ``None`` keeps the plugin's default (what the
    evaluation measures). The defaults sweep (``benchmarks/eval_defaults.py``) varies them on the warm-up set."""

    budget_tokens: int | None = None
    window: int | None = None
    min_samples: int | None = None
    threshold: float | None = None
    discovery_tokens: int | None = None
    """``[context] discovery_tokens``: the budget of one discovery answer and of one expansion message."""


DEFAULTS = Parameters()


def config_text(style: Style, parameters: Parameters = DEFAULTS) -> str | None:
    """The workspace config of a code style (``None`` for native styles).

    PTC + tool search is PTC Plus with management on, a budget of 0 (no contract is shown in full, every
    one is found through ``capabilities.search``) and statistics off (nothing ever becomes full): code mode
    with deferred contracts, whatever ``parameters`` say about the budget (ADR 0094). ``both`` is PTC Plus
    cold with ``[runtime] presentation = "both"``.
    """
    if style not in CODE_STYLES:
        return None
    lines = ["# Written by the token evaluation for this run.", "version = 1", "", "[management]"]
    lines.append(f"enabled = {'true' if style in MANAGED_STYLES else 'false'}")
    if style is Style.PTC_SEARCH:
        lines.append("budget_tokens = 0")
    elif parameters.budget_tokens is not None:
        lines.append(f"budget_tokens = {parameters.budget_tokens}")
    if style is Style.PTC_PLUS_BOTH:
        lines += ["", "[runtime]", 'presentation = "both"']
    statistics = "false" if style is Style.PTC_SEARCH else "true"
    lines += ["", "[statistics]", f"enabled = {statistics}", "share_with_user = false"]
    for key in ("window", "min_samples", "threshold"):
        value = getattr(parameters, key)
        if value is not None:
            lines.append(f"{key} = {value}")
    if parameters.discovery_tokens is not None:
        lines += ["", "[context]", f"discovery_tokens = {parameters.discovery_tokens}"]
    return "\n".join([*lines, ""])


def setup_for(style: Style, parameters: Parameters = DEFAULTS, *, always: tuple[str, ...] = ()) -> StyleSetup:
    """The plugins and config of ``style``; a fresh tool-search plugin per call (its loads are per host).

    :param always: tool search's always-loaded tools (the mature variant's, from the warm-up statistics).
    """
    plugins: tuple[object, ...]
    if style in (Style.NATIVE, Style.NATIVE_SEQUENTIAL):
        plugins = ()
    elif style in SEARCH_STYLES:
        plugins = (ToolSearchPlugin(always=always),)
    else:
        plugins = (ptc_plus.plugin,)
    return StyleSetup(plugins=plugins, config=config_text(style, parameters))


def write_config(workspace: Path, setup: StyleSetup) -> None:
    """Write ``setup``'s workspace config (nothing for a style without one)."""
    if setup.config is None:
        return
    path = workspace_config_file(workspace)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(setup.config, encoding="utf-8")


@attrs.frozen(kw_only=True)
class UserDirs:
    """One run's stand-in for the user's home: ``home`` (``HOME``), ``config`` (``XDG_CONFIG_HOME``) and
    ``state`` (``XDG_STATE_HOME``: the MCP tools snapshots, so a cold run never plans from an earlier run's)."""

    home: Path
    config: Path
    state: Path

    @classmethod
    def under(cls, root: Path) -> UserDirs:
        dirs = cls(home=root / "home", config=root / "config", state=root / "state")
        for path in (dirs.home, dirs.config, dirs.state):
            path.mkdir(parents=True, exist_ok=True)
        return dirs


@contextlib.contextmanager
def isolated_environment(dirs: UserDirs) -> Iterator[None]:
    """Point ``HOME``/``XDG_CONFIG_HOME`` at ``dirs``, keep the catalog cache where it was, and drop the gate's
    variables; restore all on exit.

    The process environment is global: runs must not overlap (the runner runs them one at a time).
    """
    changed = {"HOME": str(dirs.home), "XDG_CONFIG_HOME": str(dirs.config), "XDG_STATE_HOME": str(dirs.state)}
    cache = cache_directory()
    if cache is not None:
        # The catalog cache is content-addressed (byte-identical to a fresh build, ADR 0078): keeping the user's
        # saves rebuilding a 2,000-tool catalog's index, SDK and embeddings in every run, and changes no count.
        changed[CACHE_DIR_ENV] = str(cache)
    saved = {name: os.environ.get(name) for name in (*changed, CACHE_DIR_ENV, *GATE_VARIABLES)}
    try:
        for name in GATE_VARIABLES:
            os.environ.pop(name, None)
        os.environ.update(changed)
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
