"""The seam both vector stores implement: Qdrant Edge in-process and a Qdrant server.

The same points, payloads, filters and fusion queries go to both; only the client classes differ.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ..sparse import SparseVec

DENSE = "dense"
SPARSE = "bm25"

# Keyword payload indexes, created before any data is written.
KEYWORD_FIELDS = (
    "workspace_id",
    "project_id",
    "repo_id",
    "branch",
    "file_path",
    "language",
    "chunk_kind",
    "symbol",
)


@dataclass(slots=True)
class StorePoint:
    """A point to upsert. ``dense`` may be None: lexical first, dense filled in later."""

    id: str
    sparse: SparseVec
    payload: dict
    dense: np.ndarray | None = None


@dataclass(slots=True)
class StoreFilter:
    """Payload conditions, all optional; every list is OR inside, AND across fields."""

    workspace_id: str | None = None
    file_paths: list[str] | None = None
    languages: list[str] | None = None
    chunk_kinds: list[str] | None = None
    branch: str | None = None
    project_id: str | None = None

    def is_empty(self) -> bool:
        return not any((self.workspace_id, self.file_paths is not None, self.languages,
                        self.chunk_kinds, self.branch, self.project_id))


@dataclass(slots=True)
class StoreHit:
    """A fused hit with the rank it had in each prefetch list (1-based, None if absent), and its
    cosine similarity to the query when it is in the dense list (the one score that compares across
    collections embedded by the same model: reference-library fusion uses it)."""

    id: str
    score: float
    payload: dict
    dense_rank: int | None = None
    bm25_rank: int | None = None
    # ranks in the lists search adds beside the store's (exact literals, identifiers), by list name
    extra_ranks: dict = field(default_factory=dict)
    dense_score: float | None = None


@dataclass(slots=True)
class HybridQuery:
    sparse: SparseVec
    dense: np.ndarray | None
    filter: StoreFilter = field(default_factory=StoreFilter)
    limit: int = 30
    prefetch_limit: int = 100
    rrf_k: int = 60
    weights: tuple[float, float] = (1.0, 1.0)  # (dense, sparse)


class VectorStore(Protocol):
    """Storage for one collection of chunk points (named dense + sparse vectors)."""

    name: str

    def ensure_collection(self, dimensions: int) -> None:
        """Create the collection and its payload indexes if missing; refuse a wrong dimension."""
        ...

    def upsert(self, points: list[StorePoint]) -> None: ...

    def set_dense(self, ids: list[str], vectors: np.ndarray) -> None:
        """Attach dense vectors to existing points."""
        ...

    def set_payload(self, flt: StoreFilter, payload: dict) -> None:
        """Merge ``payload`` into every point matching ``flt`` (vectors untouched)."""
        ...

    def dense_vectors(self, ids: list[str]) -> dict[str, np.ndarray]:
        """The stored dense vectors of these points (points without one are left out)."""
        ...

    def set_payload_ids(self, ids: list[str], payload: dict) -> None:
        """Merge ``payload`` into the points with these ids (vectors untouched)."""
        ...

    def delete_file(self, workspace_id: str, path: str) -> None: ...

    def delete_ids(self, ids: list[str]) -> None: ...

    def delete_workspace(self, workspace_id: str) -> None:
        """Delete every point of one workspace (``probe prune``)."""
        ...

    def hybrid_query(self, query: HybridQuery) -> list[StoreHit]:
        """Dense + sparse prefetch with filters, fused by RRF inside the store."""
        ...

    def count(self, flt: StoreFilter | None = None, *, with_dense: bool = False) -> int: ...

    def all_ids(self, flt: StoreFilter | None = None) -> dict[str, str]:
        """Every point id → its file_path (used to reconcile after a crash)."""
        ...

    def flush(self) -> None: ...

    def close(self) -> None: ...
