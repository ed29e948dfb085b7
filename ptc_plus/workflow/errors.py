"""Errors of workflow scripts and Ralph (codes ``PTC-8xxx``; messages under ``error.<code>`` in both locales).

``PTC-800x`` refuse a start (nothing ran), ``PTC-801x`` are the fatal errors
that end a started run, ``PTC-802x`` name a run's stop reason when it did not
complete, ``PTC-803x`` belong to Ralph.
"""

from __future__ import annotations

from ptc_plus.errors import PtcError


class WorkflowError(PtcError):
    """Root of the workflow errors."""

    code = "PTC-8000"


class ScriptSyntax(WorkflowError):
    """The script does not parse (``line``, ``detail``)."""

    code = "PTC-8001"


class ScriptRefused(WorkflowError):
    """The script uses what a workflow script may not (``line``, ``what``)."""

    code = "PTC-8002"


class CapsAboveCeiling(WorkflowError):
    """A requested cap is above the deployment's (``name``, ``value``, ``ceiling``)."""

    code = "PTC-8003"


class UnknownProvider(WorkflowError):
    """``agent(provider=...)`` names a provider the host does not have (``provider``, ``known``)."""

    code = "PTC-8004"


class InvalidArguments(WorkflowError):
    """The tool's arguments are not usable (``detail``)."""

    code = "PTC-8005"


class WorkflowClosed(WorkflowError):
    """The plugin is shutting down: no run starts."""

    code = "PTC-8006"


class RalphObjectiveInvalid(WorkflowError):
    """``/ralph`` needs an objective of at most ``limit`` characters."""

    code = "PTC-8031"


class RalphRoundsInvalid(WorkflowError):
    """``--max-rounds`` must be a whole number from 1 to ``ceiling``."""

    code = "PTC-8032"


class RalphCostWithoutPrices(WorkflowError):
    """``[workflow] ralph_max_cost`` (``cap``) is set but the user file lists no ``[workflow] prices``."""

    code = "PTC-8034"


class RalphPriceInvalid(WorkflowError):
    """A ``[workflow] prices`` entry (``route``, ``entry``) is not ``uncached=U [cached=C] output=O``."""

    code = "PTC-8035"


FATAL_OPTION = "PTC-8011"
"""An ``agent(...)`` option the engine does not know, or a known one of the wrong type (``option``)."""
FATAL_SCHEMA = "PTC-8012"
"""An ``agent(schema=...)`` that is no JSON Schema the validator supports (``detail``)."""
FATAL_PROVIDER = UnknownProvider.code
FATAL_AGENTS = "PTC-8013"
"""The run asked for more children than its cap (``limit``)."""
FATAL_ITEMS = "PTC-8014"
"""``parallel`` or ``pipeline`` was given more items than the per-call cap (``count``, ``limit``)."""
FATAL_CALL = "PTC-8015"
"""``agent`` was called without exactly one text prompt (``detail``)."""
CAP_CODES = frozenset({FATAL_AGENTS, FATAL_ITEMS})
"""Fatal codes that are a tripped cap (stop reason ``cap-tripped``, not ``failed``)."""
FATAL_HOST = "PTC-8016"
"""The host's child-agent service raised instead of reporting the child's failure (``detail``)."""
