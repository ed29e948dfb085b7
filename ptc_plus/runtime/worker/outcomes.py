"""The outcome kinds the worker reports in its ``done`` frame, as the strings the host reads.

The worker imports the standard library only, so it cannot read the host's table
(:data:`ptc_plus.runtime.outcome.OUTCOMES`); these are the kinds whose row says ``reported``, and a test
checks the two agree (ADR 0122).
"""

from __future__ import annotations

EXCEPTION = "exception"
INVALID_OUTPUT = "invalid-output"
OUTPUT_LIMIT = "output-limit"

REPORTED = frozenset({EXCEPTION, INVALID_OUTPUT, OUTPUT_LIMIT})
