"""A new Edge shard is never indexed by default (``edge.STORE_INDEXES``, ``PROBE_STORE_INDEX``): the
idle owner's optimization only drops deleted points and merges segments. No on-disk BM25 inverted
index (the sparse vectors a second time) and no HNSW graph (dense search is exact) is built, and the
vacuumed shard answers as a shard written with only the surviving points does. With
``PROBE_STORE_INDEX=bm25`` it gets the BM25 index, mapped from disk, and still no HNSW graph; with
``graph`` both, and its dense leg goes through the graph (real Qdrant Edge, a real child process)."""
from __future__ import annotations

import json
import uuid

import numpy as np
import pytest
import qdrant_edge as qe

from probe_core.config import WorkspaceConfig
from probe_core.errors import ConfigError

from probe_core.sparse import SparseVec
from probe_core.storage import edge as edge_mod
from probe_core.storage.edge import EdgeStore
from probe_core.storage.edge_optimize import optimize_aside
from probe_core.storage.protocol import HybridQuery, StorePoint


# past Qdrant's default indexing threshold (10,000 KB of vectors): 14,000 float16 384-d vectors are
# 10.8 MB, so a shard made with Qdrant's defaults indexes its segment here, and this test tells
DIM, N = 384, 14_000


def points(n: int, *, dense: bool = True) -> list[StorePoint]:
    rng = np.random.default_rng(5)
    vecs = rng.normal(size=(n, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    out = []
    for k in range(n):
        terms = sorted({int(t) for t in rng.integers(0, 2000, 12)})
        out.append(StorePoint(id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"q{k}")),
                              sparse=SparseVec(terms, [1.0 + (t % 7) / 7 for t in terms]),
                              dense=vecs[k] if dense else None,
                              payload={"workspace_id": "ws", "file_path": f"f{k % 97}.py", "start_line": k, "end_line": k + 1}))
    return out


def scores(store: EdgeStore) -> tuple[dict, dict]:
    """Every point's BM25 and (exact) dense score for one query, by id."""
    shard = store._s()
    sparse_q = qe.Query.Nearest(qe.SparseVector([1, 17, 200, 999], [1.0] * 4), using=edge_mod.SPARSE)
    dense_q = qe.Query.Nearest([float(x) for x in np.linspace(-1, 1, DIM)], using=edge_mod.DENSE)
    return tuple({str(p.id): round(float(p.score), 5) for p in shard.query(
        qe.QueryRequest(limit=N, query=q, params=edge_mod.EXACT))} for q in (sparse_q, dense_q))


def _store(path, pts) -> EdgeStore:
    s = EdgeStore(path, path.name)
    s.ensure_collection(DIM)
    for start in range(0, len(pts), 2000):
        s.upsert(pts[start:start + 2000])
    return s


def _indexes(store: EdgeStore) -> list[tuple[str, str]]:
    """(dense index type, BM25 index type) of each of the shard's segments."""
    out = []
    for seg in store.path.glob("segments/*/segment.json"):
        c = json.loads(seg.read_text())["config"]
        out.append((c["vector_data"]["dense"]["index"]["type"], c["sparse_vector_data"]["bm25"]["index"]["index_type"]))
    return out


def _allocated(folder) -> int:
    return sum(f.stat().st_blocks * 512 for f in folder.rglob("*") if f.is_file())


def _files_bytes(store: EdgeStore, part: str) -> int:
    return sum(_allocated(folder) for folder in store.path.glob(f"segments/*/{part}"))


def test_an_optimized_new_shard_drops_deleted_points_and_builds_no_index(tmp_path):
    pts = points(N)
    gone = [p.id for p in pts[::3]]  # a third deleted: past Qdrant's vacuum threshold (a fifth)
    kept = [p for p in pts if p.id not in set(gone)]
    store = _store(tmp_path / "store" / "chunks_a", pts)
    try:
        store.delete_ids(gone)
        dense_before = scores(store)[1]
        vectors_before = _files_bytes(store, "vector_storage-dense")
        store.flush()
        wal_before = _allocated(store.path / "wal")
        assert optimize_aside(store, abandon=lambda: False) is True  # the vacuum ran, and was swapped in
        # the optimized copy is what is open now: its preallocated WAL segments were copied with
        # their holes (``sparse_copy``), not as 32 MB of zeros each
        assert _allocated(store.path / "wal") <= wal_before + 1024 * 1024
        assert _indexes(store) and all(i == ("plain", "MutableRam") for i in _indexes(store)), _indexes(store)
        assert not list(store.path.glob("segments/*/vector_index-dense/graph*"))  # no HNSW graph files
        assert _files_bytes(store, "vector_index-bm25") < 64 * 1024  # no on-disk inverted index
        assert _files_bytes(store, "vector_storage-dense") < vectors_before  # the deleted slots are gone
        assert store.count() == len(kept)
        fresh = _store(tmp_path / "store" / "chunks_b", kept)
        try:
            # the same BM25 scores as a shard that never held the deleted points (IDF counts only
            # live points once they are dropped), and the same exact dense scores as before
            assert scores(store) == scores(fresh)
            assert scores(store)[1] == dense_before
        finally:
            fresh.close()
    finally:
        store.close()


def test_a_filled_new_shard_has_nothing_to_optimize(tmp_path):
    """The fill's vectors are written in place: after it, a new shard's optimization finds no work
    (a shard made before built its indexes here: 30 s of CPU on the monorepo)."""
    pts = points(N)
    store = _store(tmp_path / "store" / "chunks_a", points(N, dense=False))
    try:
        store.set_dense([p.id for p in pts], np.stack([p.dense for p in pts]))
        assert optimize_aside(store, abandon=lambda: False) is False  # nothing to do
        assert all(i == ("plain", "MutableRam") for i in _indexes(store))
    finally:
        store.close()


def test_store_index_bm25_maps_a_bm25_index_and_builds_no_graph(tmp_path, monkeypatch):
    monkeypatch.setenv("PROBE_STORE_INDEX", "bm25")
    pts = points(N)
    store = _store(tmp_path / "store" / "chunks_a", pts)
    try:
        before = scores(store)
        assert optimize_aside(store, abandon=lambda: False) is True  # indexing is work to do here
        indexed = [i for i in _indexes(store) if i[1] != "MutableRam"]
        assert indexed == [("hnsw", "Mmap")], _indexes(store)  # BM25 postings mapped from disk
        # m = 0: a graph without links (Qdrant's m = 16 would link 14,000 points: ~1.8 MB)
        assert _files_bytes(store, "vector_index-dense") < 256 * 1024
        assert scores(store) == before
    finally:
        store.close()


def test_a_bad_store_index_is_one_clear_error(tmp_path, monkeypatch):
    """Refused with the rest of the configuration, before any verb touches the index (as a bad
    ``PROBE_DENSE_STORAGE``: ``probe index --rebuild`` deletes the index first), and by the store."""
    with pytest.raises(ConfigError, match="PROBE_STORE_INDEX must be one of none, bm25, graph"):
        WorkspaceConfig().with_env({"PROBE_STORE_INDEX": "hnsw"})
    monkeypatch.setenv("PROBE_STORE_INDEX", "hnsw")
    with pytest.raises(ConfigError, match="PROBE_STORE_INDEX must be one of none, bm25, graph"):
        EdgeStore(tmp_path / "bad", "t").ensure_collection(DIM)


def test_store_index_graph_searches_dense_through_its_graph(tmp_path, monkeypatch):
    """``PROBE_STORE_INDEX=graph``: the idle optimization builds an HNSW graph of the dense vectors,
    and the dense leg is searched through it (``GRAPH_SEARCH``), close to the exact scan. A shard
    made with ``none`` or ``bm25`` keeps the exact scan."""
    monkeypatch.setenv("PROBE_STORE_INDEX", "graph")
    pts = points(N)
    store = _store(tmp_path / "store" / "chunks_a", pts)
    try:
        assert store.dense_params is edge_mod.GRAPH_SEARCH and (store.path / edge_mod.GRAPH_MARK).exists()
        assert optimize_aside(store, abandon=lambda: False) is True
        assert [i for i in _indexes(store) if i[1] != "MutableRam"] == [("hnsw", "Mmap")], _indexes(store)
        assert _files_bytes(store, "vector_index-dense") > 512 * 1024  # m 16 links 14,000 points (m 0: < 256 KB)
        assert store.dense_params is edge_mod.GRAPH_SEARCH  # the swapped-in copy keeps its mark
        shard, agree = store._s(), []
        for p in pts[:: N // 20]:
            q = qe.Query.Nearest([float(x) for x in p.dense], using=edge_mod.DENSE)
            graph, exact = ([str(h.id) for h in shard.query(qe.QueryRequest(limit=10, query=q, params=params))]
                            for params in (store.dense_params, edge_mod.EXACT))
            assert graph[0] == p.id  # a chunk's own vector finds it first
            agree.append(len(set(graph) & set(exact)) / 10)
        # random 384-d vectors have no neighbourhoods, the graph's hardest case (0.885-1.0 seen; the
        # dev set's real ones in the monorepo: 0.998)
        assert sum(agree) / len(agree) >= 0.8, agree
        hits = store.hybrid_query(HybridQuery(sparse=pts[7].sparse, dense=pts[7].dense, filter=None, limit=200,
                                              prefetch_limit=100, rrf_k=60, weights=(1.0, 1.0)))
        assert next(h for h in hits if h.dense_rank == 1).id == pts[7].id
    finally:
        store.close()
    for index in ("none", "bm25"):
        monkeypatch.setenv("PROBE_STORE_INDEX", index)
        other = _store(tmp_path / "store" / f"chunks_{index}", pts[:10])
        try:
            assert other.dense_params is edge_mod.EXACT and not (other.path / edge_mod.GRAPH_MARK).exists()
        finally:
            other.close()
