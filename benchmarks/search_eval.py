"""Discovery evaluation on a harder labelled set (issue 17, item 1).

The set (``tests/data/search_eval/queries.json``) holds at least 200 queries
over the same 307-capability catalog as ``search_quality.py``
(``catalog_data.benchmark_catalog_parts``), half English and half Chinese,
phrased the way people and models ask: paraphrases, task-shaped requests,
casual verbs, short keyword phrases a program sends, and queries nothing in
the catalog fits (no target). The *held-out* part was written first, from
the tool descriptions only, before the ranker had scored any query; its
sha256 (:func:`held_out_digest`) is recorded in the file header so tuning
cannot change it unnoticed. The *tuning* part was written afterwards.

Content-word overlap (how many of a query's content words appear in its
target's text) is defined in ``tests/data/search_eval/README.md`` and
implemented here by :func:`content_units` and :func:`overlap`; it never uses
the ranker or its keyword index.

Reported per split, language, style and overlap band: recall@1, recall@3 and
MRR (over the top 10). For "nothing fits" queries: how often the ranker
returns anything at all (the current discovery API then expands it as a
contract), and how often the top hit is *confidently wrong*: its score is at
least :data:`CONFIDENCE_SHARE` of the median top-1 score of the correctly
answered targeted queries in the same run (a threshold calibrated per run, so
rankers with different score scales compare).

Run: ``.venv/bin/python benchmarks/search_eval.py`` → benchmarks/results/search_eval.json
"""

from __future__ import annotations

import hashlib
import platform
import re
import statistics
import sys
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
EVAL_DIR = ROOT / "tests" / "data" / "search_eval"
QUERIES = EVAL_DIR / "queries.json"
LEXICON = EVAL_DIR / "overlap_lexicon.json"
RESULTS = Path(__file__).resolve().parent / "results" / "search_eval.json"

SPLITS = ("held-out", "tuning")
LANGUAGES = ("en", "zh")
STYLES = ("paraphrase", "task", "casual", "keyword")
BANDS = ((0.0, 0.1, "0-10%"), (0.1, 0.2, "10-20%"), (0.2, 0.3, "20-30%"), (0.3, 1.01, ">30%"))
HELD_OUT_OVERLAP_CEILING = 0.30
"""Mean overlap of the held-out targeted queries, per language (issue 17)."""
RANK_DEPTH = 10
CONFIDENCE_SHARE = 0.5


_SOURCE_NOISE = frozenset({"mcp", "host", "skill", "resources"})
_CJK_RUN = re.compile(r"[\u3400-\u9fff]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_LATIN = re.compile(r"[A-Za-z]+")


def stem(word: str) -> str:
    """Light suffix stripping, the same on both sides: plural, -ing, -ed, final e."""
    w = word.lower()
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif w.endswith("sses"):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
    elif len(w) > 4 and w.endswith("ed"):
        w = w[:-2]
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


def latin_stems(text: str) -> list[str]:
    """Content stems of the Latin words in ``text``: identifiers split, numbers and stop words dropped."""
    spaced = _CAMEL.sub(" ", text)
    words = [w.lower() for w in _LATIN.findall(spaced)]
    stop = _stop_en()
    return [stem(w) for w in words if len(w) > 1 and w not in stop]


@cache
def _lexicon() -> dict[str, Any]:
    loaded: dict[str, Any] = orjson.loads(LEXICON.read_bytes())
    return loaded


@cache
def _stop_en() -> frozenset[str]:
    """English function words and filler ("get", "need", "want" carry no content in requests)."""
    return frozenset(_lexicon()["stop_en"])


@cache
def _glossary() -> tuple[dict[str, tuple[frozenset[str], ...]], tuple[str, ...]]:
    raw = _lexicon()
    words = {zh: tuple(frozenset(latin_stems(gloss)) for gloss in glosses) for zh, glosses in raw["words"].items()}
    stop = tuple(sorted(raw["stop"], key=len, reverse=True))
    return words, stop


def _segment(run: str) -> tuple[list[str], list[str]]:
    """Known words (longest match, left to right) and bigrams of what is left, stop words removed."""
    words, stop = _glossary()
    for s in stop:
        run = run.replace(s, "|")
    known: list[str] = []
    bigrams: list[str] = []
    longest = max(map(len, words))
    for piece in run.split("|"):
        i, rest = 0, ""
        while i < len(piece):
            hit = next((piece[i : i + n] for n in range(longest, 0, -1) if piece[i : i + n] in words), None)
            if hit is None:
                rest += piece[i]
                i += 1
                continue
            bigrams += [rest[j : j + 2] for j in range(len(rest) - 1)]
            rest = ""
            known.append(hit)
            i += len(hit)
        bigrams += [rest[j : j + 2] for j in range(len(rest) - 1)]
    return known, bigrams


def content_units(text: str) -> frozenset[tuple[str, str]]:
    """A query's content units: ``("en", stem)``, ``("zh", known word)`` and ``("bi", CJK bigram)``."""
    units = {("en", s) for s in latin_stems(_CJK_RUN.sub(" ", text))}
    for run in _CJK_RUN.findall(text):
        known, bigrams = _segment(run)
        units |= {("zh", w) for w in known} | {("bi", b) for b in bigrams}
    return frozenset(units)


def target_text(capability: Any) -> str:
    """What a capability says of itself: source server, name, description, parameter names."""
    server = [w for w in re.split(r"[:\-_/]", capability.source) if w and w not in _SOURCE_NOISE]
    return " ".join([*server, capability.name, capability.description, *capability.parameters])


@cache
def _profile(text: str) -> tuple[frozenset[str], str, frozenset[str]]:
    """Stems (with the glosses of its known Chinese words), its CJK text, its CJK bigrams."""
    words, _ = _glossary()
    cjk = "|".join(_CJK_RUN.findall(text))
    stems = set(latin_stems(_CJK_RUN.sub(" ", text)))
    for zh, glosses in words.items():
        if zh in cjk:
            stems |= set().union(*glosses)
    bigrams = frozenset(cjk[i : i + 2] for i in range(len(cjk) - 1) if "|" not in cjk[i : i + 2])
    return frozenset(stems), cjk, bigrams


def _matches(unit: tuple[str, str], profile: tuple[frozenset[str], str, frozenset[str]]) -> bool:
    stems, cjk, bigrams = profile
    kind, value = unit
    if kind == "en":
        return value in stems
    if kind == "bi":
        return value in bigrams
    glosses = _glossary()[0][value]
    return value in cjk or any(gloss and gloss <= stems for gloss in glosses)


def overlap(query: str, texts: Iterable[str]) -> float | None:
    """Share of the query's content units found in a target's text (best target); None without a target."""
    units = content_units(query)
    shares = [sum(_matches(u, _profile(t)) for u in units) / len(units) if units else 0.0 for t in texts]
    return round(max(shares), 4) if shares else None


def band(share: float) -> str:
    return next(name for low, high, name in BANDS if low <= share < high or (high == 0.3 and share == 0.3))


def held_out_digest(queries: Sequence[dict[str, Any]]) -> str:
    """sha256 of the held-out queries, in file order, each serialised with sorted keys."""
    held_out = [q for q in queries if q["split"] == "held-out"]
    return hashlib.sha256(orjson.dumps(held_out, option=orjson.OPT_SORT_KEYS)).hexdigest()


def load_set(path: Path = QUERIES) -> dict[str, Any]:
    loaded: dict[str, Any] = orjson.loads(path.read_bytes())
    return loaded


def set_problems(data: dict[str, Any], identities: dict[str, str]) -> list[str]:
    """Everything wrong with the set's format; ``identities`` maps each catalog identity to its text.

    Checks: at least 200 queries and 100 held out; English and Chinese halves
    equal in each split; known styles and splits; unique ids and texts; every
    target in the catalog; queries with no target in both languages of both
    splits; the recorded held-out sha256; held-out mean overlap per language at
    most :data:`HELD_OUT_OVERLAP_CEILING`.
    """
    queries: list[dict[str, Any]] = data["queries"]
    problems: list[str] = []
    if len(queries) < 200:
        problems.append(f"{len(queries)} queries, fewer than 200")
    for split in SPLITS:
        mine = [q for q in queries if q["split"] == split]
        en, zh = (sum(q["lang"] == lang for q in mine) for lang in LANGUAGES)
        if en != zh:
            problems.append(f"{split}: {en} English against {zh} Chinese")
        for lang in LANGUAGES:
            if not any(q["lang"] == lang and not q["targets"] for q in mine):
                problems.append(f"{split} {lang}: no 'nothing fits' query")
    if sum(q["split"] == "held-out" for q in queries) < 100:
        problems.append("fewer than 100 held-out queries")
    for field, allowed in (("split", SPLITS), ("lang", LANGUAGES), ("style", STYLES)):
        problems += [f"{q['id']}: {field} {q[field]!r}" for q in queries if q[field] not in allowed]
    for field in ("id", "text"):
        values = [q[field] for q in queries]
        problems += [f"duplicate {field} {v!r}" for v in sorted(set(values)) if values.count(v) > 1]
    problems += [f"{q['id']}: unknown target {t}" for q in queries for t in q["targets"] if t not in identities]
    if data["held_out_sha256"] != held_out_digest(queries):
        problems.append("the held-out part no longer matches its recorded sha256")
    for lang, mean in held_out_overlap(queries, identities).items():
        if mean > HELD_OUT_OVERLAP_CEILING:
            problems.append(f"held-out {lang} mean overlap {mean:.3f} over {HELD_OUT_OVERLAP_CEILING}")
    return problems


def query_overlap(query: dict[str, Any], identities: dict[str, str]) -> float | None:
    return overlap(query["text"], [identities[t] for t in query["targets"] if t in identities])


def held_out_overlap(queries: Sequence[dict[str, Any]], identities: dict[str, str]) -> dict[str, float]:
    """Mean overlap of the held-out queries that have a target, per language."""
    means = {}
    for lang in LANGUAGES:
        shares = [query_overlap(q, identities) for q in queries if q["split"] == "held-out" and q["lang"] == lang]
        known = [s for s in shares if s is not None]
        means[lang] = round(sum(known) / max(1, len(known)), 4)
    return means


def _mean(values: list[float]) -> float:
    return round(sum(values) / max(1, len(values)), 4)


def _scores(ranked: list[tuple[str, float]], targets: list[str]) -> tuple[bool, bool, float]:
    position = next((i for i, (identity, _) in enumerate(ranked) if identity in targets), None)
    if position is None:
        return False, False, 0.0
    return position == 0, position < 3, 1.0 / (position + 1)


def _numbers(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    return {
        "queries": n,
        "recall@1": round(sum(r["at1"] for r in rows) / n, 4) if n else None,
        "recall@3": round(sum(r["at3"] for r in rows) / n, 4) if n else None,
        "mrr": round(sum(r["rr"] for r in rows) / n, 4) if n else None,
    }


def _breakdown(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"all": _numbers(rows)}
    for lang in LANGUAGES:
        out[f"lang {lang}"] = _numbers([r for r in rows if r["lang"] == lang])
    for style in STYLES:
        out[f"style {style}"] = _numbers([r for r in rows if r["style"] == style])
    for *_, name in BANDS:
        out[f"overlap {name}"] = _numbers([r for r in rows if r["band"] == name])
    return out


def evaluate(
    data: dict[str, Any], ranked: dict[str, list[tuple[str, float]]], identities: dict[str, str]
) -> dict[str, Any]:
    """The report for one ranking of every query (``ranked[id]`` = (identity, score), best first)."""
    rows = []
    for q in data["queries"]:
        at1, at3, rr = _scores(ranked[q["id"]], q["targets"])
        share = query_overlap(q, identities)
        rows.append(
            {**q, "at1": at1, "at3": at3, "rr": rr, "overlap": share, "band": None if share is None else band(share)}
        )
    targeted = [r for r in rows if r["targets"]]
    correct_tops = [ranked[r["id"]][0][1] for r in targeted if r["at1"]]
    threshold = round(CONFIDENCE_SHARE * statistics.median(correct_tops), 6) if correct_tops else 0.0
    report: dict[str, Any] = {"confidence_threshold": threshold, "splits": {}}
    for split in (*SPLITS, "all"):
        mine = [r for r in rows if split == "all" or r["split"] == split]
        aimed = [r for r in mine if r["targets"]]
        report["splits"][split] = {
            "targeted": _breakdown(aimed),
            "overlap_mean": {lang: _mean([r["overlap"] for r in aimed if r["lang"] == lang]) for lang in LANGUAGES},
            "overlap_bands": {name: sum(r["band"] == name for r in aimed) for *_, name in BANDS},
            "top1_above_threshold_when_right": _share([r for r in aimed if r["at1"]], ranked, threshold),
            "top1_above_threshold_when_wrong": _share([r for r in aimed if not r["at1"]], ranked, threshold),
            "nothing_fits": {
                group: _nothing_fits(
                    [r for r in mine if not r["targets"] and group in ("all", r["lang"])], ranked, threshold
                )
                for group in ("all", *LANGUAGES)
            },
        }
    report["tuning_misses"] = [
        {"id": r["id"], "text": r["text"], "targets": r["targets"], "top3": [i for i, _ in ranked[r["id"]][:3]]}
        for r in targeted
        if r["split"] == "tuning" and not r["at1"]
    ]
    return report


def _share(rows: list[dict[str, Any]], ranked: dict[str, list[tuple[str, float]]], threshold: float) -> float | None:
    if not rows:
        return None
    return round(sum(bool(ranked[r["id"]]) and ranked[r["id"]][0][1] >= threshold for r in rows) / len(rows), 4)


def _nothing_fits(
    rows: list[dict[str, Any]], ranked: dict[str, list[tuple[str, float]]], threshold: float
) -> dict[str, Any]:
    return {
        "queries": len(rows),
        "answered": round(sum(bool(ranked[r["id"]]) for r in rows) / max(1, len(rows)), 4),
        "confidently_wrong": _share(rows, ranked, threshold),
    }


def _latency(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "p50_ms": round(1000 * ordered[len(ordered) // 2], 3),
        "p99_ms": round(1000 * ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))], 3),
    }


def _verdicts(data: dict[str, Any], confident: dict[str, bool], ranked: dict[str, list[tuple[str, float]]]) -> Any:
    """The ranker's own "good match" verdict (ADR 0077): how often it abstains, per split and kind of query."""
    out: dict[str, Any] = {}
    for split in SPLITS:
        mine = [q for q in data["queries"] if q["split"] == split]
        none = [q for q in mine if not q["targets"]]
        right = [q for q in mine if q["targets"] and ranked[q["id"]][:1] and ranked[q["id"]][0][0] in q["targets"]]
        wrong = [q for q in mine if q["targets"] and q not in right]
        out[split] = {
            "nothing_fits_answered_no_good_match": _ratio(sum(not confident[q["id"]] for q in none), len(none)),
            "right_top1_kept": _ratio(sum(confident[q["id"]] for q in right), len(right)),
            "wrong_top1_withheld": _ratio(sum(not confident[q["id"]] for q in wrong), len(wrong)),
        }
    return out


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def run(data: dict[str, Any], snapshot: Any, identities: dict[str, str], *, semantic: bool) -> dict[str, Any]:
    """One configuration's report: lexical only, or fused with the semantic layer (ADR 0077)."""
    import time

    from ptc_plus.discovery.api import semantic_layer
    from ptc_plus.discovery.ranker import ranking

    layer = semantic_layer(snapshot) if semantic else None
    if semantic and layer is None:
        raise SystemExit("the semantic layer is not installed (pip install 'ptc-plus[semantic]')")
    ranked: dict[str, list[tuple[str, float]]] = {}
    confident: dict[str, bool] = {}
    times: list[float] = []
    for q in data["queries"]:
        start = time.perf_counter()
        result = ranking(snapshot.index, q["text"], limit=RANK_DEPTH, semantic=layer)
        times.append(time.perf_counter() - start)
        ranked[q["id"]] = [(m.identity, m.score) for m in result.matches]
        confident[q["id"]] = result.confident
    return {
        "configuration": "lexical" if layer is None else f"lexical + semantic ({layer.encoder.version})",
        "latency": _latency(times),
        "good_match_verdict": _verdicts(data, confident, ranked),
        **evaluate(data, ranked, identities),
    }


def main() -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from catalog_data import benchmark_catalog_parts

    from ptc_plus.capabilities.catalog import build_catalog
    from ptc_plus.discovery.semantic import enabled
    from ptc_plus.discovery.snapshot import build_snapshot

    tools, skills, resources = benchmark_catalog_parts()
    snapshot = build_snapshot(build_catalog(tools=tools, skills=skills, resources=resources))
    identities = {c.identity: target_text(c) for c in snapshot.catalog.capabilities}
    data = load_set()
    problems = set_problems(data, identities)
    if problems:
        raise SystemExit("the evaluation set is malformed:\n" + "\n".join(problems))
    chosen = enabled() and "--lexical" not in sys.argv
    report = {
        "version": 2,
        "catalog_size": len(snapshot.catalog.capabilities),
        "queries": len(data["queries"]),
        "held_out_sha256": data["held_out_sha256"],
        "python": platform.python_version(),
        "headline": "held-out",
        **run(data, snapshot, identities, semantic=chosen),
    }
    if chosen:
        lexical = run(data, snapshot, identities, semantic=False)
        report["lexical_only"] = {
            "latency": lexical["latency"],
            "good_match_verdict": lexical["good_match_verdict"],
            "splits": {s: {"targeted": lexical["splits"][s]["targeted"]} for s in SPLITS},
        }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n")
    print("configuration:", report["configuration"], report["latency"])
    for split, numbers in report["splits"].items():
        for group, figures in numbers["targeted"].items():
            print(f"{split:9} {group:18} {figures}")
        print(f"{split:9} nothing fits       {numbers['nothing_fits']}")
    print("good-match verdict:", report["good_match_verdict"])
    if chosen:
        for split in SPLITS:
            for group in ("all", "lang en", "lang zh"):
                print(f"lexical only {split:9} {group:8}", report["lexical_only"]["splits"][split]["targeted"][group])
        print("lexical only good-match verdict:", report["lexical_only"]["good_match_verdict"])
    for miss in report["tuning_misses"]:
        print("tuning miss:", miss["text"], miss["targets"], "→", miss["top3"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
