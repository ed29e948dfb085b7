"""The persisted results of an evaluation matrix (``docs/evaluation/results.json``).

One file holds every run of one ``ptc-plus eval``: which suite version ran,
in which unit the tokens are counted, where and when it was measured, and per
run the metered totals and the oracle's verdict. The report and the charts
read only this object, so a results file regenerates its README on its own.

The format is versioned (:data:`RESULTS_VERSION`); a reader refuses a version
it does not know. Unknown token counts (real-model mode, a provider that did
not say) are ``null``, never ``0``.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import attrs
import orjson

from hookspecs.serialization import canonical_bytes, structure, unstructure
from ptc_plus.evaluation.prices import DEFAULT, PriceSheet

RESULTS_VERSION = 1
SCRIPTED = "scripted"
MODEL = "model"
RAN = "ran"
NOT_RUNNABLE = "not-runnable"
"""A record's state: the style cannot run at this catalog size (its request exceeds the model's context)."""


@attrs.frozen(kw_only=True)
class RunRecord:
    """One run: a task in one style at one catalog size (one repetition in real-model mode).

    :ivar requests: model requests of the whole family (main agent, children, discovery, retries).
    :ivar first_request_input: input tokens of the run's first request: what the catalog costs up front.
    :ivar passed: the oracle's verdict (an engine error is a failure with its error as ``reason``).
    :ivar state: :data:`RAN`, or :data:`NOT_RUNNABLE` (``passed`` is false, ``reason`` says why; not a
        failure of the product).
    """

    task: str
    category: str
    style: str
    catalog: int
    requests: int
    input_cached: int | None
    input_uncached: int | None
    output: int | None
    total: int | None
    first_request_input: int | None
    passed: bool
    reason: str = ""
    repetition: int = 0
    state: str = RAN
    input_written: int | None = None
    """The uncached input written into the prompt cache (ADR 0096); ``None``: unknown (real-model mode, a
    failed run, a file written before it was counted)."""


@attrs.frozen(kw_only=True)
class Results:
    """Every run of one evaluation, with what is needed to read the numbers right.

    :ivar mode: :data:`SCRIPTED` (deterministic transcripts, counted with the project's tokenizer) or
        :data:`MODEL` (a real model; the provider's own usage numbers).
    :ivar model: the model's name in real-model mode, else ``""``.
    :ivar repetitions: runs per (task, style, catalog); 1 in scripted mode.
    :ivar measured_at: UTC, ISO 8601.
    :ivar python: the interpreter version; ``platform`` the machine (``sys.platform`` and architecture).
    """

    version: int = RESULTS_VERSION
    suite_version: str
    unit: str
    mode: str = SCRIPTED
    model: str = ""
    repetitions: int = 1
    catalogs: tuple[int, ...]
    styles: tuple[str, ...]
    tasks: tuple[str, ...]
    measured_at: str
    python: str
    platform: str
    command: str
    runs: tuple[RunRecord, ...] = ()
    discovery: str = ""
    """The discovery ranker in force (``ptc_plus.capabilities.ranker_name``): tool search and PTC Plus's
    discovery answers depend on it; ``""`` in results written before it was recorded."""
    prices: PriceSheet = DEFAULT
    """The price sheet the report's cost-weighted headline uses (ADR 0096)."""
    host_prompt: str = ""
    """The host system prompt setting (``none``, ``3k``, ``15k``); ``""`` in results written before it existed."""
    host_prompt_tokens: int = 0
    """The host prompt's own size in :attr:`unit` (metered first in every request)."""
    min_cacheable_prefix: int = 0
    """Tokens a shared prefix needs to be cached; ``0`` in results written before the rule (ADR 0096)."""
    source: str = ""
    """Where the suite's tasks come from (``Suite.source``: a public package, its version and digest); ``""``:
    tasks written here."""


class UnknownResultsVersion(ValueError):
    """A results file of a format version this code does not know."""


def dumps(results: Results) -> bytes:
    """The file's bytes: canonical, indented JSON (stable diffs when the report is regenerated)."""
    return canonical_bytes(unstructure(results), indent=True) + b"\n"


def loads(data: bytes) -> Results:
    """Parse a results file. Raises :class:`UnknownResultsVersion`, ``orjson`` or ``cattrs`` errors."""
    raw = orjson.loads(data)
    version = raw.get("version") if isinstance(raw, dict) else None
    if version != RESULTS_VERSION:
        raise UnknownResultsVersion(f"results version {version!r}; this code reads {RESULTS_VERSION}")
    return structure(raw, Results)


def write(results: Results, path: Path) -> None:
    """Write atomically: a reader sees the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(dumps(results))
            os.fchmod(handle.fileno(), 0o644)  # mkstemp makes 0600; the file is committed and shared
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read(path: Path) -> Results:
    """Read a results file written by :func:`write`."""
    return loads(path.read_bytes())


__all__ = [
    "MODEL",
    "NOT_RUNNABLE",
    "RAN",
    "RESULTS_VERSION",
    "SCRIPTED",
    "Results",
    "RunRecord",
    "UnknownResultsVersion",
    "dumps",
    "loads",
    "read",
    "write",
]
