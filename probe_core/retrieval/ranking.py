"""The knobs of search ranking, in one typed value: fusion weights, priors, exact-match and graph
evidence, diversity.

The defaults were chosen on the dev set and checked on git histories (``docs/benchmarks.md``).
They are the same for every repository: per-repository weights tuned on a repository's git history
were considered and left out, because the history score disagrees with the dev set on exactly the
fusion weights such tuning would change (``docs/benchmarks.md``, "Does the history track the dev set").
Benchmarks pass variants to ``search(..., ranking=...)``.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..errors import ConfigError


@dataclass(frozen=True, slots=True)
class RankingSettings:
    """How the ranked lists are fused and the fused list is shaped (all defaults measured)."""

    dense_weight: float = 1.0  # RRF weight of the dense (embedding) list
    sparse_weight: float = 1.0  # RRF weight of the BM25 list
    literal_weight: float = 1.0  # RRF weight of the list of chunks holding a quoted string of the query
    identifier_weight: float = 1.0  # RRF weight of the list of chunks defining/using an identifier of the query
    rrf_k: int = 60
    # Priors: a chunk's fused score is scaled when its kind is not what the query asks for.
    test_penalty: float = 0.75  # tests, unless the query talks about tests
    doc_penalty: float = 0.5  # documentation, unless the query asks for docs
    example_penalty: float = 0.75  # examples/demos, unless the query asks for an example
    build_penalty: float = 0.5  # CI pipelines, build scripts, tool configs, unless the query asks for them
    # Diversity: at most this many ranges of one file in the answer (0: no limit).
    per_file_cap: int = 0
    # Graph evidence: RRF weight of the list of the top hits' callers, callees and related types
    # (0: off); the top hits themselves keep their places (graph_evidence.py).
    graph_weight: float = 0.5
    # ...and the share of that weight a head range holding a neighbour gains when the query asks how
    # the code works in words only (QueryIntent.asks_mechanism): the head is then re-sorted (0: off).
    graph_head_weight: float = 0.25
    # Query expansion (expansion.py): BM25 weight of the repository's words that a query word means
    # but does not spell (0: off), and whether the embedder reads them after the query (1) or not (0).
    # File evidence: a range behind the first few gains this RRF weight at the place of the best
    # range of its file among them (0: off; ranges.lift_file_mates).
    file_weight: float = 0.5
    vocab_weight: float = 1.5
    vocab_dense: float = 1.0

    def replace(self, **changes) -> "RankingSettings":
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_dict(cls, data: dict | None) -> "RankingSettings":
        """The defaults with the changes in ``data``; unknown keys or bad values are a ``ConfigError``."""
        if not data:
            return DEFAULT_RANKING
        if not isinstance(data, dict):
            raise ConfigError("ranking settings must be an object")
        known = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise ConfigError(f"unknown ranking setting(s) {unknown}; known: {', '.join(known)}")
        changes = {}
        for key, value in data.items():
            want = int if known[key].type in ("int", int) else float
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ConfigError(f"ranking setting {key!r} must be a non-negative number, not {value!r}")
            changes[key] = want(value)
        return dataclasses.replace(DEFAULT_RANKING, **changes)


DEFAULT_RANKING = RankingSettings()
