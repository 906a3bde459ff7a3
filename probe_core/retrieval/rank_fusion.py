"""Reciprocal Rank Fusion of the store's two lists (dense, BM25) with the lists search adds itself
(exact literals, identifiers).

The store fuses dense and BM25 and reports each hit's rank in both; asking it for the whole union
of its two prefetch lists gives every candidate, so the fusion can be recomputed here with any
number of extra lists, using Qdrant's own formula (``weight / (k + rank - 1)``, ranks from 1).
A candidate that only an extra list found gets its payload from the manifest.

While dense vectors are still filling, the dense list can only rank the chunks that have one, and
giving its top ranks the full weight let whichever chunks were embedded first outrank the lexical
winners (``docs/benchmarks.md``, "Answers while dense vectors fill"). So the dense term is
per candidate: a candidate without a vector is not penalised for it, it takes its BM25 rank as its
stand-in dense rank (``dense_term``); at full coverage nothing changes.
"""
from __future__ import annotations

from collections.abc import Callable

from ..storage.protocol import StoreHit
from .ranking import RankingSettings


def rrf_term(rank: int | None, weight: float, k: int) -> float:
    """One list's contribution to a candidate's fused score (0 when the list does not have it)."""
    return weight / (k + rank - 1) if rank else 0.0


def dense_term(h: StoreHit, embedded: bool, coverage: float, ranking: RankingSettings) -> float:
    """The dense list's contribution to ``h`` while vectors fill: its own rank when it has a vector
    (``embedded``), else its BM25 rank stands in (the dense list cannot see it yet, so it neither
    helps nor hurts). ``coverage`` is not used by this rule; the variants it was measured against
    (``bench/bench_partial_fill.py``) take the same arguments."""
    return rrf_term(h.dense_rank if embedded else h.bm25_rank, ranking.dense_weight, ranking.rrf_k)


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
        dense = (dense_term(h, h.id not in lacking, coverage, ranking) if coverage < 1.0
                 else rrf_term(h.dense_rank, ranking.dense_weight, k))
        h.score = (dense + rrf_term(h.bm25_rank, ranking.sparse_weight, k)
                   + sum(rrf_term(rank, weights[name], k) for name, rank in h.extra_ranks.items()))
    return sorted(by_id.values(), key=tie_order)


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
