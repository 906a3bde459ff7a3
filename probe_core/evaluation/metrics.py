"""Retrieval metrics, defined as the dev set's scorer defines them, so a history score and a
dev-set score mean the same thing.

A returned range hits a gold span when the paths are equal and the lines overlap; a range counts
as its first 200 lines (a whole-file answer cannot farm hits). R@n = gold spans hit in the top n
/ min(n, number of gold spans); MRR@10 = 1 / rank of the first hit in the top 10 (0 if none).
"""
from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean

MAX_SPAN = 200
METRICS = ("R@1", "R@10", "MRR@10")


def _hits(result: dict, gold: Sequence[dict]) -> set[int]:
    start = int(result["start_line"])
    end = min(int(result["end_line"]), start + MAX_SPAN - 1)
    return {i for i, g in enumerate(gold)
            if g["path"] == result["path"] and start <= int(g["end_line"]) and end >= int(g["start_line"])}


def recall_at(results: Sequence[dict], gold: Sequence[dict], n: int) -> float:
    found: set[int] = set()
    for r in results[:n]:
        found |= _hits(r, gold)
    return len(found) / min(n, len(gold)) if gold else 0.0


def mrr_at_10(results: Sequence[dict], gold: Sequence[dict]) -> float:
    for rank, r in enumerate(results[:10], 1):
        if _hits(r, gold):
            return 1.0 / rank
    return 0.0


def score(results: Sequence[dict], gold: Sequence[dict]) -> dict[str, float]:
    """R@1, R@10 and MRR@10 of one ranked answer (dicts with path, start_line, end_line)."""
    return {"R@1": min(1.0, recall_at(results, gold, 1)), "R@10": recall_at(results, gold, 10),
            "MRR@10": mrr_at_10(results, gold)}


def mean_scores(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    """The mean of each metric over queries (0s for no queries)."""
    return {m: (fmean(r[m] for r in rows) if rows else 0.0) for m in METRICS}
