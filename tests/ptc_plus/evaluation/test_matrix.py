"""The matrix's metering settings on real runs: the host prompt in every style, counts free of the run's path."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptc_plus.evaluation.matrix import run_matrix
from ptc_plus.evaluation.results import Results, RunRecord
from ptc_plus.evaluation.task import Style
from tests.ptc_plus.evaluation.tiny_suite import CHILD, ONE_CALL, SUITE

STYLES = (Style.NATIVE, Style.TOOL_SEARCH, Style.PTC, Style.PTC_PLUS_COLD)
CATALOG = 20


async def measure(workdir: Path, host_prompt: str) -> Results:
    workdir.mkdir(parents=True)
    return await run_matrix(
        SUITE, tasks=(ONE_CALL, CHILD), styles=STYLES, catalogs=(CATALOG,), workdir=workdir, host_prompt=host_prompt
    )


def counts(record: RunRecord) -> RunRecord:
    assert record.passed, record.reason
    return record


@pytest.mark.asyncio
@pytest.mark.needs_bwrap
async def test_the_host_prompt_is_sent_first_in_every_request_of_every_style_and_paths_change_no_count(
    tmp_path: Path,
) -> None:
    short = await measure(tmp_path / "t", "3k")
    # The same runs under a longer directory (another TMPDIR, another uid): byte-identical counts.
    longer = await measure(tmp_path / "a-much-longer-temporary-directory" / "ptc-plus-eval-123456", "3k")
    assert [counts(r) for r in short.runs] == [counts(r) for r in longer.runs]

    bare = await measure(tmp_path / "bare", "none")
    assert (short.host_prompt, short.host_prompt_tokens, bare.host_prompt_tokens) == ("3k", 3000, 0)
    assert short.min_cacheable_prefix == 1024
    for prompted, plain in zip(short.runs, bare.runs, strict=True):
        assert (prompted.task, prompted.style) == (plain.task, plain.style)
        assert prompted.requests == plain.requests >= 2
        # Every request of every style carries the same 3,000 tokens more, the first one in every run too.
        assert prompted.first_request_input == (plain.first_request_input or 0) + 3000
        extra = (prompted.input_cached or 0) + (prompted.input_uncached or 0)
        extra -= (plain.input_cached or 0) + (plain.input_uncached or 0)
        assert extra == 3000 * prompted.requests, prompted
        # Sent once uncached per run; every later request (a child's included) reads it from the run's cache.
        assert (prompted.input_cached or 0) >= 3000 * (prompted.requests - 1)
        assert prompted.output == plain.output
