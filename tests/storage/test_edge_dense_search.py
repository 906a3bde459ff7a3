"""The dense list is exact even once the idle owner has optimized the store and a segment has an
HNSW graph (``edge.EXACT``), unless the shard was made with ``PROBE_STORE_INDEX=graph``
(``test_edge_no_indexing.py``): through the graph, answers would depend on when the owner last
optimized, and at the monorepo's 137k chunks the graph's recall on real vectors is not measured
(``docs/benchmarks.md``, "The dense leg at monorepo size": ~3-5 ms a search was all it saved).

Real Qdrant Edge. Probe's own thresholds give a graph only to a large segment (~13k vectors of 384
dimensions), too slow to build in a unit test, so the shard is optimized here with a graph forced
on 3,000 small vectors, and a deliberately coarse one (few links): its answers differ from an exact
scan's, which tells the two searches apart."""
from __future__ import annotations

import json
import uuid

import numpy as np
import pytest
import qdrant_edge as qe

from probe_core import sparse
from probe_core.storage import edge
from probe_core.storage.edge import EdgeStore
from probe_core.storage.protocol import DENSE, SPARSE, HybridQuery, StoreFilter, StorePoint

DIM, N, LIMIT = 16, 3000, 100


def _points(rng) -> list[StorePoint]:
    vecs = rng.normal(size=(N, DIM)).astype(np.float32)
    return [StorePoint(id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"p{k}")), sparse=sparse.embed_document("parse", 3.0),
                       dense=vecs[k] / np.linalg.norm(vecs[k]), payload={"workspace_id": "ws", "file_path": f"f{k}.py"})
            for k in range(N)]


def _force_graph(path) -> None:
    """Optimize the shard at ``path`` with a graph on any segment (threshold 1 KB), few links."""
    cfg = qe.EdgeConfig(
        vectors={DENSE: qe.EdgeVectorParams(size=DIM, distance=qe.Distance.Cosine, datatype=edge.vector_datatype())},
        sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
        optimizers=qe.EdgeOptimizersConfig(indexing_threshold=1),
        hnsw_config=qe.HnswIndexConfig(m=4, ef_construct=8, full_scan_threshold=1))
    shard = qe.EdgeShard.load(str(path), cfg)
    try:
        assert shard.optimize()
    finally:
        shard.close()
    kinds = {json.loads(seg.read_text())["config"]["vector_data"][DENSE]["index"]["type"]
             for seg in (path / "segments").glob("*/segment.json")}
    assert "hnsw" in kinds


def _dense_list(store: EdgeStore, vec, flt: StoreFilter = StoreFilter(workspace_id="ws")) -> list[str]:
    """The store's dense list for ``vec`` as search asks for it (the union of both lists)."""
    hits = store.hybrid_query(HybridQuery(sparse=sparse.embed_query("parse"), dense=vec, filter=flt, limit=2 * LIMIT,
                                          prefetch_limit=LIMIT, rrf_k=60, weights=(1.0, 1.0)))
    return [h.id for h in sorted((h for h in hits if h.dense_rank), key=lambda h: h.dense_rank)]


def _search(path, vec, params, flt: StoreFilter | None = None) -> list[str]:
    shard = qe.EdgeShard.load(str(path))
    try:
        keys = edge._keys_of(shard.info().payload_schema, path)
        pts = shard.query_batch(qe.QueryBatchRequest([qe.QueryRequest(
            limit=LIMIT, query=qe.Query.Nearest([float(x) for x in vec], using=DENSE), params=params,
            filter=edge._filter(flt, keys))]))[0]
    finally:
        shard.close()
    return [str(p.id) for p in pts]


@pytest.fixture
def shard_path(tmp_path):
    store = EdgeStore(tmp_path / "shard", "chunks_test")
    store.ensure_collection(DIM)
    store.upsert(_points(np.random.default_rng(7)))
    store.close()
    return tmp_path / "shard"


GRAPH = qe.SearchParams(hnsw_ef=64)  # what a search through the graph would ask


def test_an_optimized_segment_with_a_graph_still_answers_exactly(shard_path):
    queries = np.random.default_rng(11).normal(size=(8, DIM)).astype(np.float32)
    exact_before = [_search(shard_path, q, qe.SearchParams(exact=True)) for q in queries]
    store = EdgeStore(shard_path, "chunks_test")
    assert [_dense_list(store, q) for q in queries] == exact_before  # no graph yet: every vector read
    store.close()

    _force_graph(shard_path)
    exact = [_search(shard_path, q, qe.SearchParams(exact=True)) for q in queries]
    assert exact == exact_before
    assert [_search(shard_path, q, GRAPH) for q in queries] != exact  # the coarse graph would differ
    store = EdgeStore(shard_path, "chunks_test")
    try:
        assert [_dense_list(store, q) for q in queries] == exact
    finally:
        store.close()


def test_a_narrowed_search_stays_exact_on_a_graph(shard_path):
    half = StoreFilter(workspace_id="ws", file_paths=[f"f{k}.py" for k in range(0, N, 2)])
    _force_graph(shard_path)
    queries = np.random.default_rng(12).normal(size=(8, DIM)).astype(np.float32)
    exact = [_search(shard_path, q, qe.SearchParams(exact=True), half) for q in queries]
    assert [_search(shard_path, q, GRAPH, half) for q in queries] != exact  # the graph would differ
    store = EdgeStore(shard_path, "chunks_test")
    try:
        assert [_dense_list(store, q, half) for q in queries] == exact
    finally:
        store.close()
