"""The owner optimizes its Edge shard in a child process on a copy, then swaps the files in: the
same answers after it, a search answered while the child works, nothing left behind, and a crash
mid-swap recovered at the next open (real Qdrant Edge, a real child process)."""
from __future__ import annotations

import json
import os
import shutil
import threading
import uuid

import numpy as np
import pytest
import qdrant_edge as qe

from probe_core import sparse
from probe_core.storage import edge as edge_mod
from probe_core.storage.edge import EdgeStore
from probe_core.storage.edge_optimize import COPY_SUFFIX, OLD_SUFFIX, optimize_aside
from probe_core.storage.protocol import HybridQuery, StoreFilter, StorePoint

DIM = 8
WORDS = [f"w{i}" for i in range(300)]


def small_threshold(monkeypatch) -> None:
    """Edge plans no optimization under ~10 MB of vectors: a 10 KB threshold makes a test-sized
    shard worth optimizing (the shard keeps the setting, so the child process sees it too)."""
    plain = EdgeStore._config

    def config(dimensions: int) -> qe.EdgeConfig:
        c = plain(dimensions)
        return qe.EdgeConfig(vectors=c.vectors, sparse_vectors=c.sparse_vectors, id_tracker_memory=c.id_tracker_memory,
                             optimizers=qe.EdgeOptimizersConfig(indexing_threshold=10, default_segment_number=1))
    monkeypatch.setattr(edge_mod.EdgeStore, "_config", staticmethod(config))


def points(n: int) -> list[StorePoint]:
    rng = np.random.default_rng(3)
    out = []
    for k in range(n):
        text = " ".join(WORDS[int(j)] for j in rng.integers(0, len(WORDS), 30))
        vec = rng.normal(size=DIM).astype(np.float32)
        out.append(StorePoint(id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"p{k}")), sparse=sparse.embed_document(text),
                              dense=vec / np.linalg.norm(vec),
                              payload={"workspace_id": "ws", "file_path": f"f{k % 97}.py", "start_line": k, "end_line": k + 1}))
    return out


QUERY = HybridQuery(sparse=sparse.embed_query("w1 w17 w200"), dense=np.ones(DIM, dtype=np.float32),
                    filter=StoreFilter(workspace_id="ws"), limit=80, prefetch_limit=40)


def seen(hits) -> list:
    return [(h.id, h.dense_rank, h.bm25_rank, round(h.score, 9), h.payload["file_path"]) for h in hits]


def scores(store: EdgeStore) -> tuple[dict, dict]:
    """Every point's BM25 and dense score for ``QUERY`` (the whole lists: optimizing may reorder
    points of equal score, which the head of a ranked list shows as other ids at a rank)."""
    shard = store._s()
    sparse_q = qe.Query.Nearest(qe.SparseVector(QUERY.sparse.indices, QUERY.sparse.values), using=edge_mod.SPARSE)
    dense_q = qe.Query.Nearest([float(x) for x in QUERY.dense], using=edge_mod.DENSE)
    return tuple({str(p.id): round(float(p.score), 5) for p in shard.query(qe.QueryRequest(limit=5000, query=q))}
                 for q in (sparse_q, dense_q))


@pytest.fixture
def store(tmp_path, monkeypatch):
    small_threshold(monkeypatch)
    s = EdgeStore(tmp_path / "store" / "chunks_test", "chunks_test")
    s.ensure_collection(DIM)
    for start in range(0, 1500, 500):
        s.upsert(points(1500)[start:start + 500])
    yield s
    s.close()


def test_optimized_aside_same_answers_and_a_search_meanwhile(store):
    before, segments = scores(store), store._s().info().segments_count
    head = seen(store.hybrid_query(QUERY))
    child_running, answered = threading.Event(), []

    def abandon() -> bool:  # called while the child process optimizes the copy
        if not child_running.is_set():
            child_running.set()
            answered.append(seen(store.hybrid_query(QUERY)))  # the owner's shard answers meanwhile
        return False

    assert optimize_aside(store, abandon=abandon) is True
    assert answered == [head]
    assert scores(store) == before and store.count() == 1500
    assert store._s().info().segments_count != segments  # the optimized files are the ones open now
    assert sorted(os.listdir(store.path.parent)) == [store.path.name]  # no copy, no old files left
    store.upsert(points(1501)[1500:])  # still writable
    assert store.count() == 1501


def test_a_write_or_a_request_abandons_it(store):
    before = seen(store.hybrid_query(QUERY))
    assert optimize_aside(store, abandon=lambda: True) is None
    assert seen(store.hybrid_query(QUERY)) == before
    assert not store.path.with_name(store.path.name + COPY_SUFFIX).exists()
    writes = store.flushed_writes()
    store.upsert(points(1))
    assert store.swap_in(store.path.parent / "elsewhere", writes) is False  # written since the copy: refused


def test_a_crash_between_the_renames_is_recovered_at_open(store, tmp_path):
    before = seen(store.hybrid_query(QUERY))
    store.close()
    os.rename(store.path, store.path.with_name(store.path.name + OLD_SUFFIX))  # what a crash mid-swap leaves
    again = EdgeStore(store.path, "chunks_test")
    try:
        assert seen(again.hybrid_query(QUERY)) == before
    finally:
        again.close()
    shutil.copytree(store.path, store.path.with_name(store.path.name + OLD_SUFFIX))  # a crash after the swap
    again = EdgeStore(store.path, "chunks_test")
    try:
        assert seen(again.hybrid_query(QUERY)) == before
        assert sorted(os.listdir(store.path.parent)) == [store.path.name]  # the old files deleted at open
    finally:
        again.close()


def test_a_rebuild_wipes_an_optimization_left_behind(store):
    """A crash can leave the child's copy (``.optimizing``) or a swap's old files (``.old``) beside
    the shard; a rebuild wipes them with the shard: the old files must not come back at the next
    open, nor the copy stay on the disk."""
    from probe_core.storage.damage import wipe_index

    store.close()
    for aside in (COPY_SUFFIX, OLD_SUFFIX):
        shutil.copytree(store.path, store.path.with_name(store.path.name + aside))
    removed = wipe_index(store.path.parent.parent, store.path.name)
    assert {f"store/chunks_test{COPY_SUFFIX}", f"store/chunks_test{OLD_SUFFIX}", "store/chunks_test"} <= set(removed)
    assert not store.path.parent.exists() or os.listdir(store.path.parent) == []


def test_an_optimized_segment_maps_its_bm25_index_and_ids_from_disk(store):
    """A new shard's placements (``edge.SPARSE_INDEX_MEMORY``, ``ID_TRACKER_MEMORY``): the segments
    the idle owner's optimization makes keep their BM25 index and point ids in memory-mapped files,
    not in the heap (the monorepo's optimized shard: 42 MB anonymous at load instead of 110)."""
    assert optimize_aside(store, abandon=lambda: False) is True
    configs = [json.loads(p.read_text())["config"] for p in store.path.glob("segments/*/segment.json")]
    optimized = [c for c in configs if c["sparse_vector_data"][edge_mod.SPARSE]["index"]["index_type"] != "MutableRam"]
    assert optimized, configs
    for c in optimized:
        assert c["sparse_vector_data"][edge_mod.SPARSE]["index"]["index_type"] == "Mmap"
        assert c["id_tracker_memory"] == "cold"
    assert store.count() == 1500
