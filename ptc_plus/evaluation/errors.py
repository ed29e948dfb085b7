"""Errors of the token evaluation's engine (``PTC-74xx``): a run that cannot be made or driven.

A task that runs but answers wrongly is not an error: its oracle's verdict says so.
These say that a run could not be set up (a catalog too small for the suite, statistics
missing), or that a plan and the session it drives disagree (a tool result the driver
cannot find, a session without a plan) — a bug in a task or in the engine, never a
measurement; or that a run is not runnable (a request beyond the model's context) or
failed as a model would (a need no search round finds, a step that kept failing).
"""

from __future__ import annotations

from ptc_plus.errors import PtcError


class EvaluationError(PtcError):
    """Root of the evaluation engine's errors (never raised itself)."""


class ToolResultMissing(EvaluationError):
    """The request after a driver's call carries no tool result for that call's id.

    :ivar params: ``call_id``, ``tool``.
    """

    code = "PTC-7402"


class StepAfterAnswer(EvaluationError):
    """The host asked for another model step after the plan's final answer (in the same turn).

    :ivar params: ``task``.
    """

    code = "PTC-7404"


class CatalogTooSmall(EvaluationError):
    """The suite's own tools (with the MCP and ``agent`` tools) already exceed the requested catalog size.

    :ivar params: ``catalog``, ``needed``.
    """

    code = "PTC-7405"


class DuplicateToolName(EvaluationError):
    """Two tools of one run's catalog have the same name (a filler colliding with a world tool).

    :ivar params: ``name``.
    """

    code = "PTC-7406"


class FillerToolCalled(EvaluationError):
    """A schema-only filler tool was called: no task may need one (its handler refuses).

    :ivar params: ``tool``.
    """

    code = "PTC-7407"


class StatisticsRequired(EvaluationError):
    """The mature style was asked for without the statistics :func:`~ptc_plus.evaluation.runner.warm_up` made.

    :ivar params: ``style``.
    """

    code = "PTC-7408"


class StatisticsNotProduced(EvaluationError):
    """The warm-up families ended and left no statistics store.

    :ivar params: ``path``.
    """

    code = "PTC-7409"


class WarmUpFailed(EvaluationError):
    """A warm-up family failed (its oracle or the run itself): statistics from it would mislead.

    :ivar params: ``task``, ``reason``.
    """

    code = "PTC-7410"


class CodeModeUnavailable(EvaluationError):
    """A code style's session did not get code mode (gate, sandbox): it would silently run natively.

    :ivar params: ``style``, ``reason``.
    """

    code = "PTC-7411"


class McpServerFailed(EvaluationError):
    """The MCP server of the bridge could not be started or listed.

    :ivar params: ``command``, ``detail``.
    """

    code = "PTC-7413"


class McpToolFailed(EvaluationError):
    """An MCP tool reported an error, or its call failed; the tool's failure carries this code.

    :ivar params: ``tool``, ``detail``.
    """

    code = "PTC-7414"


class NoWarmUpTasks(EvaluationError):
    """:func:`~ptc_plus.evaluation.runner.warm_up` was asked for families of a suite without warm-up tasks.

    :ivar params: ``version``.
    """

    code = "PTC-7415"


class ContextExceeded(EvaluationError):
    """A request is larger than the model's context: the style is not runnable at this catalog size.

    Not a failure of the product: the run's record says "not runnable" (ADR 0094).

    :ivar params: ``style``, ``tokens``, ``limit``.
    """

    code = "PTC-7430"


class NeedNotFound(EvaluationError):
    """No discovery round (search with the need's words, with the tool's name, ``inspect``) showed the tool
    a plan step needs: the run fails, for every style alike.

    :ivar params: ``task``, ``step``, ``tool``.
    """

    code = "PTC-7431"


class StepFailed(EvaluationError):
    """A plan step's call (or the program running it) still failed after the step's retries.

    :ivar params: ``task``, ``step``, ``detail``.
    """

    code = "PTC-7432"


class PlanMissing(EvaluationError):
    """A session has no plan: a task without one, a turn its plan does not have, or a child whose prompt no
    child plan has.

    :ivar params: ``task``, ``prompt``.
    """

    code = "PTC-7433"
