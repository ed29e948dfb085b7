"""The discovery API programs call as ``capabilities.*``: search, find, inspect, tree.

Every function is synchronous and pure over a :class:`CatalogSnapshot` and
returns plain JSON (``version`` 1), so the host can serve it over the
runtime's control channel. Budget rules (ADR 0024):

- a budget bounds the *text* of a response (``text``), in the snapshot's
  token unit, and ``tokens`` — the measured size of that text — never exceeds it;
- only complete contracts are delivered; a contract is never truncated;
- a contract larger than the whole budget is returned as a reference
  (``reason: "over-budget"``) with the budget needed to fetch it; one that
  no longer fits beside the others is a reference with ``"budget-exhausted"``;
- names of further matches are listed, not expanded, and the first :data:`NEXT_CANDIDATES` of them are
  also named in ``candidates``, one line each (identity and the description's first sentence; their
  measured cost is ``candidate_tokens``, bounded by the lines' count and length, not by the budget; ADR 0104);
- when no match is good enough (``good_match`` false, ADR 0077) none is expanded: the nearest are
  named with reason ``"no-good-match"``, so a program looks (``inspect``/``tree``) instead of trusting one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ptc_plus.capabilities import Capability, ToolTally, delivery_text, line_counter
from ptc_plus.discovery.errors import InvalidBudget, InvalidDiscoveryArgument
from ptc_plus.discovery.prior import prefer_used
from ptc_plus.discovery.ranker import explain as explain_terms
from ptc_plus.discovery.ranker import operation_bonuses, ranking
from ptc_plus.discovery.rules import Match, Ranking
from ptc_plus.discovery.semantic import SemanticLayer, layer_for
from ptc_plus.discovery.semantic import enabled as semantic_enabled
from ptc_plus.discovery.snapshot import CatalogSnapshot
from ptc_plus.i18n import message
from ptc_plus.sdk import to_identifier

RESPONSE_VERSION = 1
DEFAULT_SEARCH_LIMIT = 10
DEFAULT_FIND_LIMIT = 20
DEFAULT_TREE_LIMIT = 50
MAX_LIMIT = 1000
MAX_PHRASINGS = 8
"""Most phrasings one ``search`` may fuse (each is bounded like a single query; ADR 0104)."""
RRF_K = 60
"""The reciprocal-rank-fusion constant: a phrasing's rank ``r`` adds ``1 / (RRF_K + r)`` (ADR 0104)."""
NEXT_CANDIDATES = 5
"""Most not-expanded matches a ``search`` answer also names as one ``candidates`` line each (ADR 0104)."""
CANDIDATE_CHARS = 100
"""Longest ``candidates`` line (characters): the identity, ``: ``, the description's first sentence, cut."""
NO_GOOD_MATCH = "no-good-match"
"""``not_expanded`` reason when the best match is below the calibrated bar (``good_match`` false, ADR 0077)."""

Json = dict[str, Any]


def _budget(snapshot: CatalogSnapshot, budget: object) -> int:
    if budget is None:
        return snapshot.default_budget
    if isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0:
        raise InvalidBudget(budget=repr(budget))
    return budget


def _limit(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_LIMIT:
        raise InvalidDiscoveryArgument(name=name, detail=f"expected a whole number from 1 to {MAX_LIMIT}")
    return value


def _text(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise InvalidDiscoveryArgument(name=name, detail="expected text")
    return value


def _entry(snapshot: CatalogSnapshot, capability: Capability) -> Json:
    return {
        "identity": capability.identity,
        "name": capability.name,
        "kind": str(capability.kind),
        "source": capability.source,
        "tokens": snapshot.costs[capability.identity],
    }


def _deliver(snapshot: CatalogSnapshot, capabilities: Sequence[Capability], budget: int) -> Json:
    lines = snapshot.derived("line-counter", lambda: line_counter(snapshot.counter))
    if lines is not None:
        chosen, tokens, references = _choose(snapshot, capabilities, budget, lines, additive=True)
        text = delivery_text(chosen)
        # Line sums are whole counts (cost.BpeTokenCounter.splits_at_line_starts); the tally's view of the
        # text (contract.ToolTally) is checked against the text itself, its lines already counted, and a
        # disagreement (never seen) counts whole texts throughout.
        if lines(text) == tokens:
            return _delivery(snapshot, budget, chosen, text, tokens, references)
    chosen, tokens, references = _choose(snapshot, capabilities, budget, snapshot.counter.count, additive=False)
    return _delivery(snapshot, budget, chosen, delivery_text(chosen), tokens, references)


def _choose(
    snapshot: CatalogSnapshot,
    capabilities: Sequence[Capability],
    budget: int,
    count: Callable[[str], int],
    *,
    additive: bool,
) -> tuple[list[Capability], int, list[Json]]:
    """Each capability in turn joins the delivery if the delivery's text, measured by ``count``, still fits.

    The text of every trial is measured (a type shared with an earlier pick is charged once, a clash
    re-renders both). With ``additive`` — ``count`` sums at line starts (:func:`.cost.line_counter`) — a
    :class:`.contract.ToolTally` measures a trial from the new tool's parts alone, so an answer costs
    linear time in its candidates; otherwise (and after a clash) each trial's whole text is counted.
    """
    tally = ToolTally(count) if additive else None
    chosen: list[Capability] = []
    tokens = 0
    references: list[Json] = []
    for capability in capabilities:
        own = snapshot.costs[capability.identity]
        if own > budget:
            references.append(_reference(snapshot, capability, "over-budget"))
            continue
        tallied = tally.trial(capability) if tally is not None else None
        measured = tallied if tallied is not None else count(delivery_text([*chosen, capability]))
        if measured <= budget:
            if tally is not None and tallied is not None:
                tally.add(capability)
            else:
                tally = None  # the text no longer is the tally's units (e.g. clashing types were qualified)
            chosen.append(capability)
            tokens = measured
        else:
            references.append(_reference(snapshot, capability, "budget-exhausted"))
    return chosen, tokens, references


def _delivery(
    snapshot: CatalogSnapshot, budget: int, chosen: list[Capability], text: str, tokens: int, references: list[Json]
) -> Json:
    return {
        "version": RESPONSE_VERSION,
        "budget": budget,
        "unit": snapshot.counter.unit,
        "tokens": tokens,
        "text": text,
        "expanded": [dict(_entry(snapshot, c), revision=c.revision) for c in chosen],
        "not_expanded": references,
    }


def _reference(snapshot: CatalogSnapshot, capability: Capability, reason: str) -> Json:
    own = snapshot.costs[capability.identity]
    return dict(_entry(snapshot, capability), reason=reason, fetch={"names": [capability.identity], "budget": own})


def search(
    snapshot: CatalogSnapshot,
    query: str | Sequence[str],
    *,
    budget: int | None = None,
    limit: int = DEFAULT_SEARCH_LIMIT,
) -> Json:
    """The best matches for ``query``: complete contracts within ``budget``, the rest named.

    ``limit`` bounds how many matches are considered (expanded or named);
    ``more_matches`` counts the matches beyond it (a narrower query finds them).

    ``query`` may be a list of 1 to :data:`MAX_PHRASINGS` phrasings of one need: each is ranked as a query
    of its own and the rankings are fused by reciprocal rank (ADR 0104), one answer within one budget. A
    match found by a confident phrasing ranks before any found only by phrasings with no good match, and
    only those are expanded; ``more_matches`` is then a lower bound (the phrasings' matches overlap).
    A single string (or a list of one) is answered exactly as before. Between near ties the capability the
    workspace used more comes first (``snapshot.usage``, ADR 0111).
    """
    phrasings = _phrasings(query)
    spent = _budget(snapshot, budget)
    wanted = _limit("limit", limit)
    layer = semantic_layer(snapshot)
    # Each phrasing's near ties are ordered by the workspace's usage before any fusion (ADR 0111).
    rankings = [
        prefer_used(ranking(snapshot.index, p, limit=wanted, semantic=layer), snapshot.usage) for p in phrasings
    ]
    if len(phrasings) == 1:
        ranked = rankings[0]
        trusted = {m.identity for m in ranked.matches} if ranked.confident else set()
    else:
        ranked, trusted = _fused(rankings, wanted)
    found = [c for m in ranked.matches if (c := snapshot.get(m.identity)) is not None]
    if ranked.confident:
        response = _deliver(snapshot, [c for c in found if c.identity in trusted], spent)
        response["not_expanded"] += [_reference(snapshot, c, NO_GOOD_MATCH) for c in found if c.identity not in trusted]
    else:
        # Nothing fits well: name the nearest capabilities, expand none (a wrong contract costs more than a look).
        response = _deliver(snapshot, [], spent)
        response["not_expanded"] = [_reference(snapshot, c, NO_GOOD_MATCH) for c in found]
    scores = {m.identity: m.score for m in ranked.matches}
    for item in (*response["expanded"], *response["not_expanded"]):
        item["score"] = scores[item["identity"]]
    answer = {
        "query": query if isinstance(query, str) else list(phrasings),
        **response,
        "more_matches": max(0, ranked.total - len(ranked.matches)),
        "good_match": ranked.confident,
    }
    answer["candidates"], answer["candidate_tokens"] = _candidates(snapshot, response["not_expanded"])
    if not ranked.confident:
        answer["hint"] = message("ptc.discovery.no-good-match")
    return answer


def candidate_line(capability: Capability) -> str:
    """``identity: first sentence of the description``, at most :data:`CANDIDATE_CHARS` characters."""
    lines = capability.description.strip().splitlines()
    first = lines[0].strip() if lines else ""
    for end in (". ", "。", "; "):
        if end in first:
            first = first[: first.index(end) + len(end)].rstrip(" ;")
    line = f"{capability.identity}: {first}" if first else capability.identity
    return line if len(line) <= CANDIDATE_CHARS else line[: CANDIDATE_CHARS - 1].rstrip() + "…"


def _candidates(snapshot: CatalogSnapshot, references: Sequence[Json]) -> tuple[list[str], int]:
    """One line for each of the first :data:`NEXT_CANDIDATES` references, and what the lines cost together.

    The lines are the cheap next step (``inspect`` the right one rather than search again). Like the
    references they word, they are not charged to the budget, which bounds the contracts' text (ADR 0024):
    a tight budget is when a miss costs most. Their cost is bounded instead, by :data:`NEXT_CANDIDATES`
    lines of at most :data:`CANDIDATE_CHARS` characters (ADR 0104).
    """
    lines = [candidate_line(c) for r in references[:NEXT_CANDIDATES] if (c := snapshot.get(r["identity"])) is not None]
    return lines, snapshot.counter.count("\n".join(lines)) if lines else 0


def _phrasings(query: object) -> tuple[str, ...]:
    """``query`` as its phrasings: one text, or a list of 1 to :data:`MAX_PHRASINGS` texts."""
    if isinstance(query, list | tuple):
        if not 0 < len(query) <= MAX_PHRASINGS or not all(isinstance(q, str) for q in query):
            raise InvalidDiscoveryArgument(
                name="query", detail=f"expected text or a list of 1 to {MAX_PHRASINGS} texts"
            )
        return tuple(query)
    return (_text("query", query),)


def _fused(rankings: Sequence[Ranking], limit: int) -> tuple[Ranking, set[str]]:
    """Reciprocal-rank fusion of the phrasings' rankings, and the identities a confident phrasing found.

    A capability's score is the sum over phrasings of ``1 / (RRF_K + rank)`` (rounded to 9 decimals):
    scale-free, since lexical scores of different phrasings are not comparable, and phrasings that agree
    lift a capability. Matches a confident phrasing found come first; ties go to the better single rank,
    then the earlier phrasing, then the identity, so the answer depends on the inputs alone.
    """
    sums: dict[str, float] = {}
    best: dict[str, tuple[int, int]] = {}
    trusted: set[str] = set()
    for phrasing, ranked in enumerate(rankings):
        for position, match in enumerate(ranked.matches, 1):
            sums[match.identity] = sums.get(match.identity, 0.0) + 1.0 / (RRF_K + position)
            best[match.identity] = min(best.get(match.identity, (position, phrasing)), (position, phrasing))
            if ranked.confident:
                trusted.add(match.identity)
    order = sorted(sums, key=lambda i: (i not in trusted, -round(sums[i], 9), best[i], i))[:limit]
    matches = tuple(Match(identity=i, score=round(sums[i], 9)) for i in order)
    total = max(len(matches), *(r.total for r in rankings))
    return Ranking(matches=matches, confident=any(r.confident for r in rankings), total=total), trusted


def explain(snapshot: CatalogSnapshot, query: str, *, limit: int = DEFAULT_SEARCH_LIMIT) -> dict[str, Json]:
    """Why each of the best matches ranked where it did (the same ranking :func:`search` uses), best first.

    Per identity: ``rank``, the query ``terms`` its document matched (alternatives of one query unit joined
    by ``/``; ``=name`` for an exact name), its ``lexical`` score, its semantic ``similarity`` (``None``
    without the semantic layer), the fused ``score`` the ranking used, ``operation``: what the query's
    operation added to it (ADR 0099; ``None`` without the semantic layer), and ``gloss``: ``None``, or when the
    query's English gloss was scored beside it (ADR 0084) its ``text``, the gloss ``terms`` the document
    matched, and the gloss's ``lexical`` score and ``similarity``.
    """
    query = _text("query", query)
    layer = semantic_layer(snapshot)
    ranked = ranking(snapshot.index, query, limit=_limit("limit", limit), semantic=layer)
    operations = operation_bonuses(snapshot.index, query) if layer is not None else None
    return {
        m.identity: {
            "identity": m.identity,
            "rank": position,
            "terms": explain_terms(snapshot.index, query, m.identity),
            "lexical": m.lexical,
            "similarity": m.similarity,
            "score": m.score,
            "operation": None if operations is None else operations.get(m.identity, 0.0),
            "gloss": None
            if not ranked.gloss
            else {
                "text": ranked.gloss,
                "terms": explain_terms(snapshot.index, ranked.gloss, m.identity),
                "lexical": m.gloss_lexical,
                "similarity": m.gloss_similarity,
            },
        }
        for position, m in enumerate(ranked.matches, 1)
    }


def semantic_layer(snapshot: CatalogSnapshot) -> SemanticLayer | None:
    """The snapshot's semantic layer in index order, or ``None`` (lexical only; see :mod:`.semantic`)."""
    if not semantic_enabled():
        return None
    # Once per snapshot, not per query: the catalog-wide walk and digest cost more than a lexical search.
    return snapshot.derived("semantic-layer", lambda: _semantic_layer(snapshot))


def _semantic_layer(snapshot: CatalogSnapshot) -> SemanticLayer | None:
    capabilities = [c for i in snapshot.index.identities if (c := snapshot.get(i)) is not None]
    if len(capabilities) != len(snapshot.index.identities):
        return None
    return layer_for(capabilities)


def find(snapshot: CatalogSnapshot, query: str, *, limit: int = DEFAULT_FIND_LIMIT) -> Json:
    """Names of the best matches for ``query`` (no contract text), best first."""
    query = _text("query", query)
    matches = ranking(snapshot.index, query, limit=_limit("limit", limit), semantic=semantic_layer(snapshot)).matches
    found = []
    for match in matches:
        capability = snapshot.get(match.identity)
        if capability is not None:
            found.append(dict(_entry(snapshot, capability), score=match.score))
    return {"version": RESPONSE_VERSION, "query": query, "unit": snapshot.counter.unit, "matches": found}


def resolve(snapshot: CatalogSnapshot, name: str) -> list[Capability]:
    """Capabilities a name may mean: an identity, else a member name, else a Python function name."""
    exact = snapshot.get(name)
    if exact is not None:
        return [exact]
    by_name = [c for c in snapshot.catalog.capabilities if c.name == name]
    if by_name:
        return by_name
    return [c for c in snapshot.catalog.capabilities if to_identifier(c.name) == name]


def inspect(snapshot: CatalogSnapshot, names: Sequence[str] | str, *, budget: int | None = None) -> Json:
    """Complete contracts of ``names`` in the order given, within ``budget`` (text, not item count).

    Unknown names are listed under ``unknown``; a name that means several
    capabilities is listed under ``ambiguous`` with their identities.
    """
    if isinstance(names, str):
        names = [names]
    if not isinstance(names, Sequence) or not all(isinstance(n, str) for n in names):
        raise InvalidDiscoveryArgument(name="names", detail="expected a list of capability names")
    spent = _budget(snapshot, budget)
    chosen: dict[str, Capability] = {}
    unknown: list[str] = []
    ambiguous: dict[str, list[str]] = {}
    for name in names:
        found = resolve(snapshot, name)
        if not found:
            unknown.append(name)
        elif len(found) > 1:
            ambiguous[name] = [c.identity for c in found]
        else:
            chosen.setdefault(found[0].identity, found[0])
    response = _deliver(snapshot, list(chosen.values()), spent)
    return {**response, "unknown": unknown, "ambiguous": ambiguous}


def tree(snapshot: CatalogSnapshot, *, limit: int = DEFAULT_TREE_LIMIT) -> Json:
    """Sources and their member names (at most ``limit`` per source; ``more`` counts the rest)."""
    per_source = _limit("limit", limit)
    groups: dict[str, list[Capability]] = {}
    for capability in snapshot.catalog.capabilities:
        groups.setdefault(capability.source, []).append(capability)
    sources = []
    for source in sorted(groups):
        members = sorted(groups[source], key=lambda c: c.name)
        sources.append(
            {
                "source": source,
                "kinds": sorted({str(c.kind) for c in members}),
                "count": len(members),
                "members": [{"identity": c.identity, "name": c.name} for c in members[:per_source]],
                "more": max(0, len(members) - per_source),
            }
        )
    return {"version": RESPONSE_VERSION, "count": len(snapshot.catalog.capabilities), "sources": sources}


_METHODS: dict[str, tuple[str, ...]] = {
    "search": ("query", "budget", "limit"),
    "find": ("query", "limit"),
    "inspect": ("names", "budget"),
    "tree": ("limit",),
}


def call(snapshot: CatalogSnapshot, method: str, arguments: Mapping[str, Any]) -> Json:
    """Serve one ``capabilities.<method>(**arguments)`` request from a program (e.g. over a control channel).

    Only the four discovery methods with their documented arguments are
    accepted; anything else raises :class:`InvalidDiscoveryArgument`, so a
    program can never reach another host function through this door.
    """
    allowed = _METHODS.get(method)
    if allowed is None:
        raise InvalidDiscoveryArgument(name="method", detail=f"expected one of {', '.join(sorted(_METHODS))}")
    if not isinstance(arguments, Mapping) or not all(isinstance(k, str) and k in allowed for k in arguments):
        raise InvalidDiscoveryArgument(name=method, detail=f"arguments must be among {', '.join(allowed)}")
    kwargs = dict(arguments)
    if method == "search":
        return search(snapshot, kwargs.pop("query", None), **kwargs)
    if method == "find":
        return find(snapshot, kwargs.pop("query", None), **kwargs)
    if method == "inspect":
        return inspect(snapshot, kwargs.pop("names", None), **kwargs)
    return tree(snapshot, **kwargs)
