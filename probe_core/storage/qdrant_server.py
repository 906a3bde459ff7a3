"""A Qdrant server (or cluster) through ``qdrant-client``: the stack and beyond-one-machine path.

Tests run this exact code against ``qdrant-client``'s local mode (``QdrantClient(":memory:")`` or
``path=``), which speaks the same API; it is far too slow for real repositories, so users only
reach it with a real server URL.
"""
from __future__ import annotations

import threading

import numpy as np
from qdrant_client import QdrantClient
from qdrant_client import models as m
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from ..errors import BackendUnavailable, IndexConfigMismatch
from ..redaction import public_url, redact
from .protocol import DENSE, KEYWORD_FIELDS, SPARSE, HybridQuery, StoreFilter, StoreHit, StorePoint


def _filter(flt: StoreFilter | None, *, with_dense: bool = False) -> m.Filter | None:
    must: list = []
    if flt is not None:
        if flt.workspace_id:
            must.append(m.FieldCondition(key="workspace_id", match=m.MatchValue(value=flt.workspace_id)))
        if flt.file_paths is not None:
            must.append(m.FieldCondition(key="file_path", match=m.MatchAny(any=list(flt.file_paths) or [""])))
        if flt.languages:
            must.append(m.FieldCondition(key="language", match=m.MatchAny(any=list(flt.languages))))
        if flt.chunk_kinds:
            must.append(m.FieldCondition(key="chunk_kind", match=m.MatchAny(any=list(flt.chunk_kinds))))
        if flt.branch:
            must.append(m.FieldCondition(key="branch", match=m.MatchValue(value=flt.branch)))
        if flt.project_id:
            must.append(m.FieldCondition(key="project_id", match=m.MatchValue(value=flt.project_id)))
    if with_dense:
        must.append(m.HasVectorCondition(has_vector=DENSE))
    return m.Filter(must=must) if must else None


class QdrantServerStore:
    """A ``VectorStore`` over one collection of a Qdrant server reached with ``qdrant-client``."""

    def __init__(self, client: QdrantClient, name: str, *, where: str = "qdrant",
                 shared: tuple[str, str] | None = None):
        """``shared``: (collection, workspace_id) where this workspace's points lived before Probe
        gave each workspace its own collection; they are deleted when this one is created."""
        self.client = client
        self.name = name
        self.where = where
        self.shared = shared
        self._lock = threading.RLock()  # local mode is not thread-safe

    @classmethod
    def connect(cls, url: str, name: str, api_key: str | None = None, timeout: float = 10.0,
                shared: tuple[str, str] | None = None) -> "QdrantServerStore":
        if url.startswith("local:"):
            client = QdrantClient(location=":memory:") if url == "local::memory:" else QdrantClient(path=url[6:])
        else:
            client = QdrantClient(url=url, api_key=api_key, timeout=int(timeout))
        return cls(client, name, where=public_url(url), shared=shared)

    def _call(self, fn, *args, **kwargs):
        try:
            with self._lock:
                return fn(*args, **kwargs)
        except (ResponseHandlingException, ConnectionError, OSError) as exc:
            raise BackendUnavailable(f"Qdrant at {self.where} is unreachable: {redact(str(exc))}") from exc
        except UnexpectedResponse as exc:
            raise BackendUnavailable(f"Qdrant at {self.where} answered {exc.status_code}: {redact(repr(exc.content[:200]))}") from exc

    def ensure_collection(self, dimensions: int) -> None:
        if self._call(self.client.collection_exists, self.name):
            info = self._call(self.client.get_collection, self.name)
            vectors = info.config.params.vectors
            have = vectors[DENSE].size if isinstance(vectors, dict) and DENSE in vectors else None
            if have != dimensions:
                raise IndexConfigMismatch(
                    f"collection {self.name} holds {have}-d vectors, the embedder gives {dimensions}-d; "
                    "reindex with `probe index --rebuild`")
            return
        self._call(
            self.client.create_collection,
            self.name,
            vectors_config={DENSE: m.VectorParams(size=dimensions, distance=m.Distance.COSINE)},
            sparse_vectors_config={SPARSE: m.SparseVectorParams(modifier=m.Modifier.IDF)},
        )
        for field in KEYWORD_FIELDS:
            self._call(self.client.create_payload_index, self.name, field, m.PayloadSchemaType.KEYWORD)
        if self.shared is not None and self.shared[0] != self.name:  # where its points lived before
            self.remove_workspace(self.shared[1], self.shared[0])  # (its manifest finds them missing here)

    def remove_workspace(self, workspace_id: str, collection: str | None = None) -> None:
        """Delete the workspace's points from ``collection`` (this store's by default) and drop the
        collection when nothing is left in it (``probe prune``; the collection workspaces shared
        before each got its own)."""
        name = collection or self.name
        if not self._call(self.client.collection_exists, name):
            return
        flt = _filter(StoreFilter(workspace_id=workspace_id))
        self._call(self.client.delete, name, m.FilterSelector(filter=flt), wait=True)
        if self._call(self.client.count, name, exact=True).count == 0:
            self._call(self.client.delete_collection, name)

    def drop_collection(self) -> None:
        """Delete the whole collection (a rebuild of a workspace that has one of its own)."""
        if self._call(self.client.collection_exists, self.name):
            self._call(self.client.delete_collection, self.name)

    def upsert(self, points: list[StorePoint]) -> None:
        if not points:
            return
        out = []
        for p in points:
            vec: dict = {SPARSE: m.SparseVector(indices=p.sparse.indices, values=p.sparse.values)}
            if p.dense is not None:
                vec[DENSE] = [float(x) for x in p.dense]
            out.append(m.PointStruct(id=p.id, vector=vec, payload=p.payload))
        self._call(self.client.upsert, self.name, out, wait=True)

    def set_dense(self, ids: list[str], vectors: np.ndarray) -> None:
        if not ids:
            return
        pv = [m.PointVectors(id=i, vector={DENSE: v.astype(float).tolist()}) for i, v in zip(ids, vectors)]
        self._call(self.client.update_vectors, self.name, pv, wait=True)

    def set_payload(self, flt: StoreFilter, payload: dict) -> None:
        if flt.is_empty():
            raise ValueError("set_payload needs a non-empty filter")
        self._call(self.client.set_payload, self.name, dict(payload), points=_filter(flt), wait=True)

    def dense_vectors(self, ids: list[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for start in range(0, len(ids), 256):
            pts = self._call(self.client.retrieve, self.name, list(ids[start:start + 256]), with_payload=False,
                             with_vectors=[DENSE])
            for p in pts:
                vec = (p.vector or {}).get(DENSE) if isinstance(p.vector, dict) else None
                if vec:
                    out[str(p.id)] = np.asarray(vec, dtype=np.float32)
        return out

    def set_payload_ids(self, ids: list[str], payload: dict) -> None:
        if ids:
            self._call(self.client.set_payload, self.name, dict(payload), points=list(ids), wait=True)

    def delete_file(self, workspace_id: str, path: str) -> None:
        flt = _filter(StoreFilter(workspace_id=workspace_id, file_paths=[path]))
        self._call(self.client.delete, self.name, m.FilterSelector(filter=flt), wait=True)

    def delete_ids(self, ids: list[str]) -> None:
        if ids:
            self._call(self.client.delete, self.name, m.PointIdsList(points=ids), wait=True)

    def delete_workspace(self, workspace_id: str) -> None:
        flt = _filter(StoreFilter(workspace_id=workspace_id))
        self._call(self.client.delete, self.name, m.FilterSelector(filter=flt), wait=True)

    def hybrid_query(self, query: HybridQuery) -> list[StoreHit]:
        flt = _filter(query.filter)
        sparse = m.SparseVector(indices=query.sparse.indices, values=query.sparse.values)
        prefetch = [m.Prefetch(query=sparse, using=SPARSE, limit=query.prefetch_limit, filter=flt)]
        singles = [m.QueryRequest(query=sparse, using=SPARSE, limit=query.prefetch_limit, filter=flt)]
        if query.dense is not None:
            dense = [float(x) for x in query.dense]
            prefetch.insert(0, m.Prefetch(query=dense, using=DENSE, limit=query.prefetch_limit, filter=flt))
            singles.insert(0, m.QueryRequest(query=dense, using=DENSE, limit=query.prefetch_limit, filter=flt))
        weighted = query.weights != (1.0, 1.0)
        fusion = (m.RrfQuery(rrf=m.Rrf(k=query.rrf_k, weights=list(query.weights) if query.dense is not None
                                       else [query.weights[1]]))
                  if weighted or query.rrf_k != 60 else m.FusionQuery(fusion=m.Fusion.RRF))
        fused = m.QueryRequest(prefetch=prefetch, query=fusion, limit=query.limit, with_payload=True)
        responses = self._call(self.client.query_batch_points, self.name, [fused, *singles])
        ranks = [{str(p.id): i + 1 for i, p in enumerate(r.points)} for r in responses[1:]]
        dense_ranks = ranks[0] if query.dense is not None else {}
        dense_scores = {str(p.id): float(p.score) for p in responses[1].points} if query.dense is not None else {}
        bm25_ranks = ranks[-1]
        return [
            StoreHit(id=str(p.id), score=float(p.score), payload=dict(p.payload or {}),
                     dense_rank=dense_ranks.get(str(p.id)), bm25_rank=bm25_ranks.get(str(p.id)),
                     dense_score=dense_scores.get(str(p.id)))
            for p in responses[0].points
        ]

    def count(self, flt: StoreFilter | None = None, *, with_dense: bool = False) -> int:
        return self._call(self.client.count, self.name, count_filter=_filter(flt, with_dense=with_dense), exact=True).count

    def all_ids(self, flt: StoreFilter | None = None) -> dict[str, str]:
        out: dict[str, str] = {}
        offset = None
        while True:
            pts, offset = self._call(self.client.scroll, self.name, scroll_filter=_filter(flt), limit=1000,
                                     offset=offset, with_payload=["file_path"], with_vectors=False)
            for p in pts:
                out[str(p.id)] = (p.payload or {}).get("file_path", "")
            if offset is None:
                return out

    def flush(self) -> None:
        """Server writes are acknowledged with wait=True; nothing to flush."""

    def close(self) -> None:
        with self._lock:
            self.client.close()

