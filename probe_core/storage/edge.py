"""Qdrant Edge: the Qdrant engine in-process, files under ``.probe/``. The embedded default.

A shard has exactly one owning process (its WAL is locked; the lock is released on SIGKILL), so
the process that opens it owns the workspace. Threads inside that process share it freely.

Compact on disk (issue 18, ``docs/benchmarks.md`` "A compact index"): a new shard stores its dense
vectors as float16, half of float32's size (sparse storage has no such option: measured, no change).
An appendable segment reserves a dense slot for every point, embedded or not, so this halves the
largest file of even a lexical-only index; the dev set's scores do not move. ``PROBE_DENSE_STORAGE=
turbo8`` makes a new shard store Qdrant's ``Turbo8`` instead (8 bits a dimension plus a norm, half
of float16: the monorepo's filled ``.probe/`` 4.5 → 4.0× its source); it is not the default because
the dev set's MRR@10 fell 0.811 → 0.803 with it, near-ties reordered ("A compact index, round 4").
A shard keeps the datatype it was made with (``load`` reads its own config). Payload keys are stored
short and without the fields that are the same on every point (``edge_payload.py``), and only the
fields a query filters on get a keyword index (a shard holds one workspace: ``workspace_id``,
``repo_id`` and ``project_id`` never select anything, nor is ``symbol`` filtered on). Shards
created before keep their layout: ``load`` reads a shard's own config, and their payload keys (long,
or short with ``workspace_id``) are recognised.
"""
from __future__ import annotations

import os
import shutil
import threading
import uuid
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import qdrant_edge as qe

from .. import environment
from ..config import DENSE_STORAGES, STORE_INDEXES as INDEX_CHOICES
from ..errors import BackendUnavailable, ConfigError, IndexConfigMismatch, IndexLocked, ProbeError
from .damage import edge_words, shard_problem, store_damaged
from .disk_space import ensure_free_space
from .edge_optimize import OLD_SUFFIX
from .edge_payload import PayloadKeys, ShardIds
from .edge_wal import roll_wal
from .edge_warm import warm_in_background
from .protocol import DENSE, KEYWORD_FIELDS, SPARSE, HybridQuery, StoreFilter, StoreHit, StorePoint

# Dense search reads every vector (as an unoptimized, appendable segment does anyway): once the
# store is optimized (``edge_optimize``) a segment past Qdrant's indexing threshold gets an HNSW
# graph, whose approximate answers would make rankings depend on when the owner last optimized.
EXACT = qe.SearchParams(exact=True)
# A shard made with ``PROBE_STORE_INDEX=graph`` is searched through its graph where a segment has one
# (Qdrant scans a segment without one, or under ``full_scan_threshold``): recall@10 0.966 against the
# exact scan on Django's 43k real vectors at this ``hnsw_ef`` (``docs/benchmarks.md``, "The dense leg
# with a graph, on real vectors").
GRAPH_SEARCH = qe.SearchParams(hnsw_ef=256)
GRAPH_MARK = "probe_dense_graph"  # in a shard's folder: it was made with ``PROBE_STORE_INDEX=graph``


# keyword indexes of a new shard: the protocol's fields that ``_filter`` selects on in a one-workspace shard
EDGE_KEYWORD_FIELDS = tuple(f for f in KEYWORD_FIELDS if f not in ("workspace_id", "repo_id", "project_id", "symbol"))
MATCH_ALL = qe.Filter(must=[])  # a write's filter that selected only this shard's workspace
# a new shard's dense storage (``PROBE_DENSE_STORAGE``); a shard keeps the datatype it was made with
# (``load`` reads its own config), so float32, float16 and turbo8 shards all work as made
VECTOR_DATATYPES = {"float16": qe.VectorStorageDatatype.Float16, "turbo8": qe.VectorStorageDatatype.Turbo8}
assert tuple(VECTOR_DATATYPES) == DENSE_STORAGES
# Where optimized segments keep their point ids, and an indexed segment its BM25 index
# (``STORE_INDEXES`` below: ``bm25``, or a shard made before): memory-mapped files (Cold), not copies
# in the heap (Qdrant's default, Pinned); such a monorepo shard loads with 42 MB anonymous memory
# instead of 110. Segments without an index (appendable ones, and all of a new shard's by default)
# keep their BM25 postings in RAM regardless.
SPARSE_INDEX_MEMORY = ID_TRACKER_MEMORY = qe.Memory.Cold
# What a new shard's optimization (the idle owner's, ``edge_optimize``) builds: ``PROBE_STORE_INDEX``.
# ``none`` (the default): segments are never indexed (Qdrant's ``indexing_threshold`` 0), so the
# optimization only merges segments and drops deleted points. An indexed segment holds its BM25
# postings twice on disk, as sparse vectors and as an inverted index (+59 MB on the monorepo), and
# answered BM25 no faster there (store CPU p50 1.0-1.8 ms indexed, 1.1-1.5 ms not, the 40 monorepo
# queries). ``bm25``: that on-disk index, mapped from disk (``SPARSE_INDEX_MEMORY``), for an idle
# owner ~250 MB smaller in RAM on the monorepo (unindexed segments keep their postings in the heap).
# No HNSW graph (``m`` 0): no query reads it (dense search is ``EXACT``), and it cost 9 MB and
# most of an optimization's CPU. ``docs/benchmarks.md``, "A compact index, round 6". ``graph``: the
# BM25 index and an HNSW graph of the dense vectors (``m`` 16), which dense search then uses
# (``GRAPH_SEARCH``): a dense leg whose cost does not follow the repository's size, for ~4.6x the
# source on disk instead of ~3.9x (``docs/benchmarks.md``, "A dense leg through a graph, opt-in").
# A shard keeps the setting it was made with.
STORE_INDEXES = {"none": dict(optimizers=qe.EdgeOptimizersConfig(indexing_threshold=0)),
                 "bm25": dict(hnsw_config=qe.HnswIndexConfig(m=0, ef_construct=100, full_scan_threshold=10_000)),
                 "graph": dict(hnsw_config=qe.HnswIndexConfig(m=16, ef_construct=100, full_scan_threshold=10_000),
                               optimizers=qe.EdgeOptimizersConfig(indexing_threshold=10_000))}
assert tuple(STORE_INDEXES) == INDEX_CHOICES


def vector_datatype() -> qe.VectorStorageDatatype:
    """The dense datatype a new shard gets: ``PROBE_DENSE_STORAGE`` (``float16`` unless set)."""
    raw = (environment.get("PROBE_DENSE_STORAGE") or "float16").strip().lower()
    if raw not in VECTOR_DATATYPES:
        raise ConfigError(f"PROBE_DENSE_STORAGE must be one of {', '.join(VECTOR_DATATYPES)} (got {raw[:40]!r})")
    return VECTOR_DATATYPES[raw]


def store_index() -> str:
    """What ``PROBE_STORE_INDEX`` asks of a new shard (``none`` unless set)."""
    raw = (environment.get("PROBE_STORE_INDEX") or "none").strip().lower()
    if raw not in STORE_INDEXES:
        raise ConfigError(f"PROBE_STORE_INDEX must be one of {', '.join(STORE_INDEXES)} (got {raw[:40]!r})")
    return raw


def store_indexing() -> dict:
    """The ``EdgeConfig`` arguments ``PROBE_STORE_INDEX`` gives a new shard."""
    return STORE_INDEXES[store_index()]


def dense_search(shard_dir: Path) -> qe.SearchParams:
    """How a shard's dense leg is searched: through its graph when it was made with
    ``PROBE_STORE_INDEX=graph`` (``GRAPH_MARK`` beside its files), else ``EXACT`` (a shard made
    before the setting may have Qdrant's default graph in a segment: it stays exact)."""
    return GRAPH_SEARCH if (Path(shard_dir) / GRAPH_MARK).exists() else EXACT


def _filter(flt: StoreFilter | None, keys: PayloadKeys, *, with_dense: bool = False) -> qe.Filter | None:
    must: list = []
    key = keys.field
    if flt is not None:
        if keys.ids is not None:  # a lean shard: its one workspace and project are kept beside it
            if not (keys.ids.selects("workspace_id", flt.workspace_id)
                    and keys.ids.selects("project_id", flt.project_id)):
                must.append(qe.FieldCondition(key("file_path"), match=qe.MatchAny([""])))  # no point
        elif flt.workspace_id:
            must.append(qe.FieldCondition(key("workspace_id"), match=qe.MatchValue(flt.workspace_id)))
        if flt.file_paths is not None:
            must.append(qe.FieldCondition(key("file_path"), match=qe.MatchAny(list(flt.file_paths) or [""])))
        if flt.languages:
            must.append(qe.FieldCondition(key("language"), match=qe.MatchAny(list(flt.languages))))
        if flt.chunk_kinds:
            must.append(qe.FieldCondition(key("chunk_kind"), match=qe.MatchAny(list(flt.chunk_kinds))))
        if flt.branch:
            must.append(qe.FieldCondition(key("branch"), match=qe.MatchValue(flt.branch)))
        if flt.project_id and keys.ids is None:
            must.append(qe.FieldCondition(key("project_id"), match=qe.MatchValue(flt.project_id)))
    if with_dense:
        must.append(qe.HasVectorCondition(DENSE))
    return qe.Filter(must=must) if must else None


def _keys_of(schema, path: Path) -> PayloadKeys:
    """The payload layout of the shard at ``path``, told by its keyword indexes (``edge_payload.py``)."""
    if "file_path" in schema:
        return PayloadKeys.LONG
    if PayloadKeys.SHORT.field("workspace_id") in schema:
        return PayloadKeys.SHORT
    return PayloadKeys(short=True, ids=ShardIds(path))


def _hits(points, dense_pts, sparse_pts) -> list[StoreHit]:
    """``points`` as hits carrying their rank in each list (and their dense similarity). Each
    point's id and payload are read once: every read converts them from the engine's values (a
    UUID object, a dict) again."""
    dense = {str(p.id): (k, float(p.score)) for k, p in enumerate(dense_pts, 1)}
    bm25 = {str(p.id): k for k, p in enumerate(sparse_pts, 1)}
    out = []
    for p in points:
        pid = str(p.id)
        rank, sim = dense.get(pid, (None, None))
        out.append(StoreHit(id=pid, score=float(p.score), payload=p.payload or {}, dense_rank=rank,
                            bm25_rank=bm25.get(pid), dense_score=sim))
    return out


class EdgeStore:
    """A ``VectorStore`` over one Qdrant Edge shard directory."""

    def __init__(self, path: Path, name: str):
        self.path = Path(path)
        self.name = name
        self._shard: qe.EdgeShard | None = None
        self._keys = PayloadKeys.SHORT  # found at open: lean for a new shard, LONG or SHORT for one made before
        self._lock = threading.RLock()
        self.writes = 0  # points written (one per filter update) since open: ``edge_optimize.py`` checks and counts them
        self.warming: threading.Thread | None = None  # reads a loaded shard's files into the page cache (edge_warm.py)
        self.dense_params = EXACT  # found at open (``dense_search``)

    # -- lifecycle ---------------------------------------------------------------------------
    def _open(self, dimensions: int | None) -> qe.EdgeShard:
        if self._shard is not None:
            return self._shard
        old = self.path.with_name(self.path.name + OLD_SUFFIX)
        if not self.path.exists() and old.exists():  # a crash mid-swap (``swap_in``): the files from before it
            os.rename(old, self.path)
        elif old.exists():  # a crash after the swap, before the old files were deleted
            shutil.rmtree(old, ignore_errors=True)
        exists = (self.path / "wal").exists() or (self.path / "segments").exists()
        ensure_free_space(self.path, opening=True)  # a load may allocate ~70 MB
        if exists and (problem := shard_problem(self.path)) is not None:
            raise store_damaged(self.path.parent.parent, self.path, problem)
        # a bad PROBE_DENSE_STORAGE is its own error, not "cannot open"
        config = self._config(dimensions) if not exists and dimensions is not None else None
        try:
            if exists:
                self._shard = shard = qe.EdgeShard.load(str(self.path))
                self._keys = _keys_of(self._shard.info().payload_schema, self.path)
                self.warming = warm_in_background(self.path, lambda: self._shard is shard)
            elif dimensions is None:
                raise BackendUnavailable(f"no index at {self.path}; run `probe index` first")
            else:
                self._shard = qe.EdgeShard.create(str(self.path), config)
                if store_index() == "graph":
                    (self.path / GRAPH_MARK).write_text("dense search goes through the HNSW graph\n")
                self._keys = PayloadKeys(short=True, ids=ShardIds(self.path))
                for field in EDGE_KEYWORD_FIELDS:
                    self._shard.update(qe.UpdateOperation.create_field_index(
                        self._keys.field(field), qe.PayloadSchemaType.Keyword))
        except BackendUnavailable:
            raise
        except Exception as exc:  # qdrant_edge raises bare Exception with a message
            msg, words = str(exc), edge_words(exc, self.path)
            if "wouldblock" in words:  # the WAL's lock is held: "Can't init WAL: Kind(WouldBlock)"
                raise IndexLocked(
                    f"the index at {self.path} is open in another Probe process "
                    "(one owner per workspace: use that process, or stop it)"
                ) from exc
            if "dimension" in words or "incompatible" in words:
                raise IndexConfigMismatch(f"index at {self.path}: {msg}") from exc
            if exists and (err := store_damaged(self.path.parent.parent, self.path, exc)) is not None:
                raise err from exc
            raise BackendUnavailable(f"cannot open Qdrant Edge shard at {self.path}: {msg}") from exc
        self.dense_params = dense_search(self.path)
        return self._shard

    @contextmanager
    def _using(self):
        """The shard under its lock; a failure that means damaged files becomes ``IndexDamaged``
        (recorded for status) instead of a bare ``Exception`` ("Failed to decompress LZ4 ...")."""
        with self._lock:
            try:
                yield
            except ProbeError:
                raise
            except Exception as exc:  # qdrant_edge raises bare Exceptions
                if (err := store_damaged(self.path.parent.parent, self.path, exc)) is not None:
                    raise err from exc
                raise

    @staticmethod
    def _config(dimensions: int) -> qe.EdgeConfig:
        return qe.EdgeConfig(
            vectors={DENSE: qe.EdgeVectorParams(size=dimensions, distance=qe.Distance.Cosine,
                                                datatype=vector_datatype())},
            sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf, memory=SPARSE_INDEX_MEMORY)},
            id_tracker_memory=ID_TRACKER_MEMORY, **store_indexing(),
        )

    def ensure_collection(self, dimensions: int) -> None:
        with self._using():
            self._open(dimensions)

    def _s(self) -> qe.EdgeShard:
        return self._open(None)

    def _flt(self, flt: StoreFilter | None, *, with_dense: bool = False) -> qe.Filter | None:
        """``flt`` in this shard's payload key names (the shard is opened first: they depend on it)."""
        self._s()
        return _filter(flt, self._keys, with_dense=with_dense)

    def flush(self) -> None:
        with self._lock:
            if self._shard is not None:
                self._shard.flush()

    def close(self) -> None:
        with self._lock:
            if self._shard is not None:
                self._shard.flush()
                self._shard.close()
                self._shard = None

    def optimize(self) -> bool:
        """Merge the shard's segments and drop deleted points (Qdrant's optimizers; with
        ``PROBE_STORE_INDEX=bm25``, or in a shard made before, also index them) in this process,
        True when any changed. It holds the GIL and the store's lock throughout (14–32 s of CPU
        measured on the monorepo's 137k points when indexing): the owner uses
        ``edge_optimize.optimize_aside`` instead, which runs it in a child process on a copy and
        swaps the result in (``swap_in``)."""
        with self._using():
            return bool(self._s().optimize())

    def roll_wal(self) -> int:
        """Cut the shard's write-ahead log back to one segment (``edge_wal.py``); bytes freed.
        Searches wait meanwhile (under a second); nothing a search reads changes."""
        with self._using():
            return roll_wal(self._s(), self.path / "wal")

    def flushed_writes(self) -> int:
        """Flush, and return the write counter to compare with later (``edge_optimize``)."""
        with self._using():
            self._s().flush()
            return self.writes

    def swap_in(self, optimized: Path, writes: int) -> bool:
        """Replace the shard's files with ``optimized`` (a copy of them taken at ``writes``, then
        optimized) and reopen; False, and nothing changed, when the shard was written since."""
        old = self.path.with_name(self.path.name + OLD_SUFFIX)
        shutil.rmtree(old, ignore_errors=True)
        with self._using():  # searches wait from here: a close and a load (~1-2 s at 137k points)
            if self.writes != writes:
                return False
            self.close()
            os.rename(self.path, old)
            os.rename(optimized, self.path)
            try:
                self._open(None)
            except Exception:  # the optimized copy does not open: back to the files from before
                shutil.rmtree(self.path, ignore_errors=True)
                os.rename(old, self.path)
                self._open(None)
                raise
        shutil.rmtree(old, ignore_errors=True)  # outside the lock: deleting 300 MB takes seconds
        return True

    # -- writes ------------------------------------------------------------------------------
    def _note(self, payloads) -> None:
        """A lean shard records the workspace and project ids its points are written with."""
        if self._keys.ids is not None:
            self._keys.ids.note(payloads)

    def upsert(self, points: list[StorePoint]) -> None:
        if not points:
            return
        with self._using():
            shard = self._s()  # opened first: the payload key names depend on the shard
            self._note(p.payload for p in points)
            out = []
            for p in points:
                vec: dict = {SPARSE: qe.SparseVector(p.sparse.indices, p.sparse.values)}
                if p.dense is not None:
                    vec[DENSE] = [float(x) for x in p.dense]
                out.append(qe.Point(uuid.UUID(p.id), vec, self._keys.encode(p.payload, p.id)))
            shard.update(qe.UpdateOperation.upsert_points(out))
            self.writes += len(out)

    def set_dense(self, ids: list[str], vectors: np.ndarray) -> None:
        if not ids:
            return
        pv = [qe.PointVectors(uuid.UUID(i), {DENSE: v.astype(float).tolist()}) for i, v in zip(ids, vectors)]
        with self._using():
            self._s().update(qe.UpdateOperation.update_vectors(pv))
            self.writes += len(pv)

    def set_payload(self, flt: StoreFilter, payload: dict) -> None:
        if flt.is_empty():
            raise ValueError("set_payload needs a non-empty filter")
        with self._using():
            shard = self._s()  # opened first: the key names depend on the shard
            if self._keys.lean and {"workspace_id", "project_id"} & set(payload) and (
                    flt.file_paths is not None or flt.languages or flt.chunk_kinds or flt.branch):
                raise ValueError("an Edge shard keeps one workspace and project id for all its points:"
                                 " set them without selecting files, languages, kinds or branches")
            self._note([payload])
            stored = self._keys.encode(payload)
            if stored:  # a lean shard stores no ``project_id``: re-keying a project changes nothing here
                shard.update(qe.UpdateOperation.set_payload_by_filter(self._flt(flt) or MATCH_ALL, stored))
            self.writes += 1

    def dense_vectors(self, ids: list[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        with self._using():
            for start in range(0, len(ids), 256):
                part = [uuid.UUID(i) for i in ids[start:start + 256]]
                for p in self._s().retrieve(part, False, [DENSE]):
                    vec = (p.vector or {}).get(DENSE)
                    if vec:
                        out[str(p.id)] = np.asarray(vec, dtype=np.float32)
        return out

    def set_payload_ids(self, ids: list[str], payload: dict) -> None:
        if ids:
            with self._using():
                self._s()
                self._note([payload])
                if stored := self._keys.encode(payload):
                    self._s().update(qe.UpdateOperation.set_payload([uuid.UUID(i) for i in ids], stored))
                self.writes += len(ids)

    def delete_file(self, workspace_id: str, path: str) -> None:
        with self._using():
            flt = self._flt(StoreFilter(workspace_id=workspace_id, file_paths=[path]))
            self._s().update(qe.UpdateOperation.delete_points_by_filter(flt))
            self.writes += 1

    def delete_ids(self, ids: list[str]) -> None:
        if ids:
            with self._using():
                self._s().update(qe.UpdateOperation.delete_points([uuid.UUID(i) for i in ids]))
                self.writes += len(ids)

    def delete_workspace(self, workspace_id: str) -> None:
        with self._using():
            flt = self._flt(StoreFilter(workspace_id=workspace_id)) or MATCH_ALL
            self._s().update(qe.UpdateOperation.delete_points_by_filter(flt))
            self.writes += 1

    # -- reads -------------------------------------------------------------------------------
    def hybrid_query(self, query: HybridQuery) -> list[StoreHit]:
        with self._using():
            flt = self._flt(query.filter)
        sparse = qe.Query.Nearest(qe.SparseVector(query.sparse.indices, query.sparse.values), using=SPARSE)
        dense = qe.Query.Nearest([float(x) for x in query.dense], using=DENSE) if query.dense is not None else None
        if query.limit >= query.prefetch_limit * (2 if dense is not None else 1):
            return self._union(query, flt, sparse, dense)
        prefetches = [qe.Prefetch(limit=query.prefetch_limit, query=sparse, filter=flt)]
        requests = [qe.QueryRequest(limit=query.prefetch_limit, query=sparse, filter=flt)]
        weights = [query.weights[1]]
        if dense is not None:
            params = self.dense_params
            prefetches.insert(0, qe.Prefetch(limit=query.prefetch_limit, query=dense, filter=flt, params=params))
            requests.insert(0, qe.QueryRequest(limit=query.prefetch_limit, query=dense, filter=flt, params=params))
            weights.insert(0, query.weights[0])
        fused = qe.QueryRequest(
            limit=query.limit,
            prefetches=prefetches,
            query=qe.Fusion.Rrf(k=query.rrf_k, weights=weights),
            with_payload=True,
        )
        with self._using():
            results = self._s().query_batch(qe.QueryBatchRequest([fused, *requests]))
        fused_pts, signal_lists = results[0], results[1:]
        return self._checked(_hits(fused_pts, signal_lists[0] if dense is not None else [], signal_lists[-1]))

    def _union(self, query: HybridQuery, flt, sparse, dense) -> list[StoreHit]:
        """The whole union of the two lists (what search asks for: it fuses them again itself with
        its own lists, ``retrieval/rank_fusion.py``). Each list is searched once, with payloads, and
        scored here by weighted RRF over the reported ranks (``weight / (k + rank - 1)``); the
        store's fused query would run both searches a second time (its prefetches) for the same
        candidates and ranks."""
        requests = [qe.QueryRequest(limit=query.prefetch_limit, query=sparse, filter=flt, with_payload=True)]
        if dense is not None:
            requests.insert(0, qe.QueryRequest(limit=query.prefetch_limit, query=dense, filter=flt, with_payload=True,
                                               params=self.dense_params))
        with self._using():
            lists = self._s().query_batch(qe.QueryBatchRequest(requests))
        dense_pts, sparse_pts = (lists[0] if dense is not None else []), lists[-1]
        hits = list({h.id: h for h in _hits([*sparse_pts, *dense_pts], dense_pts, sparse_pts)}.values())
        self._checked(hits)
        for h in hits:
            h.score = ((query.weights[0] / (query.rrf_k + h.dense_rank - 1) if h.dense_rank else 0.0)
                       + (query.weights[1] / (query.rrf_k + h.bm25_rank - 1) if h.bm25_rank else 0.0))
        return sorted(hits, key=lambda h: (-h.score, h.id))

    def _checked(self, hits: list[StoreHit]) -> list[StoreHit]:
        if any(not h.payload for h in hits):  # every point has a payload: its files were lost or cut
            raise store_damaged(self.path.parent.parent, self.path, "points without their payload")
        for h in hits:  # the shard's keys (short in a new shard) as the payload callers read
            h.payload = self._keys.decode(h.payload, h.id)
        return hits

    def count(self, flt: StoreFilter | None = None, *, with_dense: bool = False) -> int:
        with self._using():
            return self._s().count(qe.CountRequest(exact=True, filter=self._flt(flt, with_dense=with_dense)))

    def all_ids(self, flt: StoreFilter | None = None) -> dict[str, str]:
        out: dict[str, str] = {}
        offset = None
        with self._using():
            path_key = self._keys.field("file_path")
            while True:
                pts, offset = self._s().scroll(qe.ScrollRequest(
                    offset=offset, limit=1000, filter=self._flt(flt),
                    with_payload=[path_key],
                    with_vector=False))
                for p in pts:
                    out[str(p.id)] = (p.payload or {}).get(path_key, "")
                if offset is None:
                    break
        return out
