"""The BFCL multi-turn base category (``bfcl-eval`` 2026.3.23): 200 public tasks nobody here wrote (issue 27).

Data and backends come from the pinned wheel, fetched without its
dependencies into the user cache and verified by sha256 (:mod:`.wheel`);
the backend classes are compiled from its text (:mod:`.backends`) and their
methods become host tools with the function docs' contracts (:mod:`.world`,
:mod:`.schemas`). Each task's ground truth, read with ``ast``
(:mod:`.ground_truth`) and executed directly, becomes its task plan
(:mod:`.plans`); the oracle is BFCL's state comparison plus the last result
in the answer (:mod:`.suite`). ADR 0095 says why; ``NOTICE`` attributes
bfcl-eval (Apache License 2.0).

Importing the package fetches nothing; ``ptc-plus eval --suite bfcl`` loads it by
path and calls :func:`load`, which finds (or downloads) the wheel and builds the
suite (ADR 0106).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ptc_plus.evaluation.task import Suite


def load() -> Suite:
    """The suite over the runnable tasks of the pinned wheel (found in the cache, downloaded there if missing)."""
    from .suite import make_suite
    from .wheel import open_wheel

    return make_suite(open_wheel())
