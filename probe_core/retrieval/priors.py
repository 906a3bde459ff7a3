"""Priors on what kind of chunk a query wants: the implementation, unless its wording (or a
``chunk_kinds`` filter) asks for tests, documentation, examples or how to do something.

Agents ask "how does X work" / "where is X done" to find the code that does X. Tests and examples
name the same identifiers as that code, and documentation describes the same feature in the same
words as the question, so all three win lexical and semantic ties they should not. Each gets its
fused score scaled down unless asked for (factors measured on the dev set, ``docs/benchmarks.md``).
"""
from __future__ import annotations

from ..storage.protocol import StoreHit
from .query_intent import QueryIntent
from .ranking import RankingSettings

EXAMPLE_DIRS = frozenset({"example", "examples", "_examples", "demo", "demos", "sample", "samples"})


def is_example_path(path: str) -> bool:
    """True for files under an examples/demos/samples directory."""
    return any(part.lower() in EXAMPLE_DIRS for part in path.split("/")[:-1])


def kind_prior(payload: dict, intent: QueryIntent, wanted_kinds: list[str] | None, ranking: RankingSettings) -> float:
    """The factor a candidate's fused score is scaled by (1.0: no prior applies)."""
    kind = payload.get("chunk_kind")
    if wanted_kinds and kind in wanted_kinds and len(wanted_kinds) == 1:
        return 1.0  # the filter already says which kind is wanted
    if kind == "test" and not intent.asks_tests:
        return ranking.test_penalty
    if kind == "doc" and not (intent.asks_docs or intent.asks_howto or intent.asks_examples):
        return ranking.doc_penalty  # READMEs and guides hold the examples and the how-tos
    if kind == "code" and not intent.asks_examples and is_example_path(payload.get("file_path", "")):
        return ranking.example_penalty
    return 1.0


def apply_priors(hits: list[StoreHit], intent: QueryIntent, wanted_kinds: list[str] | None,
                 ranking: RankingSettings) -> list[StoreHit]:
    """Scale each hit's score by its prior and re-sort (stable: equal scores keep fused order)."""
    for h in hits:
        h.score *= kind_prior(h.payload, intent, wanted_kinds, ranking)
    return sorted(hits, key=lambda h: -h.score)
