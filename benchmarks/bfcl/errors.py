"""Errors of the BFCL suite (``PTC-746x``): the pinned wheel cannot be had, or its content is not what we read.

They are evaluation errors (:class:`~ptc_plus.evaluation.errors.EvaluationError`):
a run that cannot be set up, never a measurement.
"""

from __future__ import annotations

from ptc_plus.evaluation.errors import EvaluationError


class BfclWheelUnavailable(EvaluationError):
    """The pinned ``bfcl-eval`` wheel is not in the cache and ``pip download`` did not produce it.

    :ivar params: ``version``, ``directory``, ``detail`` (pip's last output line, or what was missing).
    """

    code = "PTC-7460"


class BfclWheelMismatch(EvaluationError):
    """The wheel found (cache or ``PTC_PLUS_BFCL_WHEEL``) is not the pinned one: its sha256 differs.

    :ivar params: ``path``, ``expected``, ``actual``.
    """

    code = "PTC-7461"


class BfclGroundTruthRejected(EvaluationError):
    """A ground-truth call string is not a plain call with literal arguments (so it is never run).

    :ivar params: ``call``, ``reason``.
    """

    code = "PTC-7462"


class BfclBackendRejected(EvaluationError):
    """A backend module of the wheel imports something of ``bfcl_eval`` other than its sibling backends.

    :ivar params: ``module``, ``imported``.
    """

    code = "PTC-7463"
