"""The knobs of search ranking, in one typed value: fusion weights, priors, exact-match and graph
evidence, diversity.

The defaults were chosen on the dev set and checked on git histories (``docs/benchmarks.md``). A
workspace may carry its own fusion weights in ``.probe/config.json`` under ``"ranking"`` (written
by ``probe eval --tune``, removed by ``probe eval --untune``); anything not stored there keeps the
default.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..errors import ConfigError

CONFIG_KEY = "ranking"
# What ``probe eval --tune`` may store per repository: the fusion weights only. Priors and the
# other signals are principled defaults that must not drift per corpus.
TUNABLE = ("dense_weight", "sparse_weight", "literal_weight", "identifier_weight")


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
    # Diversity: at most this many ranges of one file in the answer (0: no limit).
    per_file_cap: int = 0
    # Graph evidence: a candidate whose symbol-graph neighbours are also strong candidates gains
    # this share of their scores (0: off).
    graph_weight: float = 0.5

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def replace(self, **changes) -> "RankingSettings":
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_dict(cls, data: dict | None, base: "RankingSettings | None" = None) -> "RankingSettings":
        """Settings from a (possibly partial) dict; unknown keys or bad values are a ``ConfigError``."""
        base = base or DEFAULT_RANKING
        if not data:
            return base
        if not isinstance(data, dict):
            raise ConfigError(f"{CONFIG_KEY!r} in .probe/config.json must be an object")
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
        return dataclasses.replace(base, **changes)


DEFAULT_RANKING = RankingSettings()


def ranking_for(config_extra: dict) -> RankingSettings:
    """The ranking a workspace uses: the defaults, with any tuned weights from its config."""
    return RankingSettings.from_dict(config_extra.get(CONFIG_KEY))
