"""Reciprocal Rank Fusion of the store's two lists (dense, BM25) with the lists search adds itself
(exact literals, identifiers).

The store fuses dense and BM25 and reports each hit's rank in both; asking it for the whole union
of its two prefetch lists gives every candidate, so the fusion can be recomputed here with any
number of extra lists, using Qdrant's own formula (``weight / (k + rank - 1)``, ranks from 1).
A candidate that only an extra list found gets its payload from the manifest.

While dense vectors are still filling, the dense list can only rank the chunks that have one, and
giving its top ranks the full weight let whichever chunks were embedded first outrank the lexical
winners (``docs/benchmarks.md``, "Answers while dense vectors fill"). So the dense term is
per candidate (``dense_term``): an embedded candidate keeps its own dense rank; a candidate without
a vector is not penalised for it: the best rank a lexical list gave it (BM25, literal, identifier)
stands in, as if the dense list agreed with the lexical evidence that found it. At full coverage
nothing changes. The stand-in was the BM25 rank alone until a monorepo showed its flaw: it counted
BM25 twice against the identifier and literal lists, so ``sympify``'s definition (identifier rank
1, BM25 rank 69) fell behind BM25's winners at 4.9 % coverage. Reading an embedded candidate's rank
among the few embedded chunks as rank / coverage (its expected rank among all) was measured and
not kept: the fill embeds source first, so the sample is not uniform and the projection only costs
(``docs/benchmarks.md``, "Partial dense coverage, round 2").
"""
from __future__ import annotations

from collections.abc import Callable

from ..storage.protocol import StoreHit
from .ranking import RankingSettings


def rrf_term(rank: int | None, weight: float, k: int) -> float:
    """One list's contribution to a candidate's fused score (0 when the list does not have it)."""
    return weight / (k + rank - 1) if rank else 0.0


def dense_term(h: StoreHit, embedded: bool, ranking: RankingSettings) -> float:
    """The dense list's contribution to ``h`` while vectors fill: its own rank when it has a vector
    (``embedded``), else its best lexical rank stands in (``best_lexical_rank``: the dense list
    cannot see it yet, so it neither helps nor hurts, and no lexical list counts twice). The rules
    it was measured against live in ``bench/bench_partial_fill.py``."""
    return rrf_term(h.dense_rank if embedded else best_lexical_rank(h), ranking.dense_weight, ranking.rrf_k)


def best_lexical_rank(h: StoreHit) -> int | None:
    """The best rank a lexical list (BM25, or a list search adds) gave ``h``; None: none has it."""
    return min([r for r in (h.bm25_rank, *h.extra_ranks.values()) if r], default=None)


def fuse(hits: list[StoreHit], extra: dict[str, tuple[list[str], float]], ranking: RankingSettings,
         payloads: Callable[[list[str]], dict[str, dict]], *, coverage: float = 1.0,
         without_vector: Callable[[list[str]], set[str]] = lambda ids: set()) -> list[StoreHit]:
    """All candidates, best first, scored by weighted RRF over the store's lists and ``extra``
    (list name → (point ids best first, weight)). ``coverage``: the share of chunks with a dense
    vector when the dense list was asked (1.0 when it was not, or all have one); below 1,
    ``without_vector(ids)`` names the candidates that have none (``dense_term``)."""
    by_id = {h.id: h for h in hits}
    missing = list(dict.fromkeys(pid for ids, weight in extra.values() if weight for pid in ids if pid not in by_id))
    if missing:
        for pid, payload in payloads(missing).items():
            by_id[pid] = StoreHit(id=pid, score=0.0, payload=payload)
    for name, (ids, weight) in extra.items():
        if not weight:
            continue
        for rank, pid in enumerate(ids, 1):
            if pid in by_id:
                by_id[pid].extra_ranks[name] = rank
    k = ranking.rrf_k
    weights = {name: weight for name, (_, weight) in extra.items()}
    lacking = without_vector(list(by_id)) if coverage < 1.0 else set()
    for h in by_id.values():
        bm25 = rrf_term(h.bm25_rank, ranking.sparse_weight, k)
        extras = sum(rrf_term(rank, weights[name], k) for name, rank in h.extra_ranks.items())
        dense = (dense_term(h, h.id not in lacking, ranking) if coverage < 1.0
                 else rrf_term(h.dense_rank, ranking.dense_weight, k))
        h.score = dense + bm25 + extras  # summed in this order since before the stand-in: ties stay ties
    return sorted(by_id.values(), key=tie_order)


def lead_with(hits: list[StoreHit], ids: list[str]) -> list[StoreHit]:
    """``hits`` with those in ``ids`` first, each group in its own order: the definitions a query
    names exactly (``parse_cookie``: its callers share its words and often outrank it in every list,
    the identifier list aside) lead, and the ranking decides the rest."""
    if not ids:
        return hits
    wanted = set(ids)
    return [h for h in hits if h.id in wanted] + [h for h in hits if h.id not in wanted]


_ABSENT = 1 << 30


def tie_order(h: StoreHit) -> tuple:
    """Best first. Equal fused scores are common (ranks 3 and 5 sum like 5 and 3: dense 1 + BM25 3
    ties BM25 1 + dense 3 exactly); a tie goes to the hit that one list liked most, then to the
    one the dense list ranks higher (it read the question's meaning, not only its words), then to
    the earlier place in the tree. Never to the point id: ids hash the workspace's own id, so the
    same tree in another folder (a clone, a copy) would order its ties differently
    (``docs/benchmarks.md``, "Result ranges")."""
    p = h.payload
    return (-h.score, _best_rank(h), h.dense_rank or _ABSENT, h.bm25_rank or _ABSENT,
            p.get("file_path", ""), int(p.get("start_line", 0)), h.id)


def _best_rank(h: StoreHit) -> int:
    """The best rank any list gave ``h``."""
    return min([r for r in (h.dense_rank, h.bm25_rank, *h.extra_ranks.values()) if r] or [_ABSENT])
