"""Search asks the store for the whole union of its dense and BM25 lists (it fuses them again with
its own lists). Qdrant Edge answers that by searching each list once, with payloads, instead of
also running a fused query whose prefetches repeat both searches: the same candidates, ranks,
similarities, payloads and RRF scores as the store's fused query (real Qdrant Edge)."""
from __future__ import annotations

import uuid

import numpy as np
import pytest

from probe_core import sparse
from probe_core.storage.edge import EdgeStore
from probe_core.storage.protocol import HybridQuery, StoreFilter, StorePoint

DIM = 8
WORDS = ["parse", "header", "cookie", "router", "hash", "password", "session", "cache", "token", "stream"]


def _points(n: int) -> list[StorePoint]:
    rng = np.random.default_rng(7)
    out = []
    for k in range(n):
        text = " ".join(WORDS[(k * 3 + j) % len(WORDS)] for j in range(1 + k % 4))
        vec = rng.normal(size=DIM).astype(np.float32)
        out.append(StorePoint(id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"p{k}")), sparse=sparse.embed_document(text, 3.0),
                              dense=vec / np.linalg.norm(vec),
                              payload={"workspace_id": "ws", "file_path": f"f{k}.py", "start_line": 1, "end_line": 2}))
    return out


@pytest.fixture
def store(tmp_path):
    s = EdgeStore(tmp_path / "shard", "chunks_test")
    s.ensure_collection(DIM)
    s.upsert(_points(60))
    yield s
    s.close()


def _seen(hits) -> dict:
    """What search reads of each candidate (it recomputes the fused score from the ranks; the
    store's own fused score can differ where equal BM25 scores tie in another order in its
    prefetch than in the list whose ranks are reported)."""
    return {h.id: (h.dense_rank, h.bm25_rank, h.dense_score, h.payload) for h in hits}


@pytest.mark.parametrize("dense", [True, False])
def test_the_union_is_the_fused_querys_candidates(store, dense):
    vec = np.random.default_rng(1).normal(size=DIM).astype(np.float32) if dense else None
    query = dict(sparse=sparse.embed_query("parse the cookie header"), dense=vec, filter=StoreFilter(workspace_id="ws"),
                 prefetch_limit=20 if dense else 59, rrf_k=60, weights=(1.0, 0.8))
    whole = 40 if dense else 59  # both lists' limits: the union path
    union = store.hybrid_query(HybridQuery(limit=whole, **query))
    fused = store.hybrid_query(HybridQuery(limit=whole - 1, **query))  # below it: fused in the store
    assert 0 < len(fused) < whole - 1  # the whole union came back from the fused query too
    assert _seen(union) == _seen(fused)
    for h in union:  # weighted RRF over the reported ranks, best first
        assert h.score == pytest.approx((1.0 / (60 + h.dense_rank - 1) if h.dense_rank else 0)
                                        + (0.8 / (60 + h.bm25_rank - 1) if h.bm25_rank else 0))
    assert union == sorted(union, key=lambda h: (-h.score, h.id))


def test_the_union_runs_each_search_once(store, monkeypatch):
    batches = []
    shard = store._s()

    class Spy:
        def query_batch(self, batch):
            batches.append(batch.queries)
            return shard.query_batch(batch)

    monkeypatch.setattr(store, "_s", lambda: Spy())
    vec = np.ones(DIM, dtype=np.float32)
    hits = store.hybrid_query(HybridQuery(sparse=sparse.embed_query("router hash"), dense=vec,
                                          filter=StoreFilter(workspace_id="ws"), limit=40, prefetch_limit=20))
    assert hits and len(batches) == 1
    assert len(batches[0]) == 2 and not any(q.prefetches for q in batches[0])


def test_optimize_keeps_every_answer(store):
    query = HybridQuery(sparse=sparse.embed_query("session token stream"), dense=np.ones(DIM, dtype=np.float32),
                        filter=StoreFilter(workspace_id="ws"), limit=40, prefetch_limit=20)
    before = _seen(store.hybrid_query(query))
    store.optimize()
    assert _seen(store.hybrid_query(query)) == before and store.count() == 60
