"""The shard's write-ahead log cut back to one segment (``storage/edge_wal.py``), on a real Qdrant
Edge shard with real 32 MB log segments: the open segment a fill left part-written goes, no point
or update is lost, then or after a reopen."""
from __future__ import annotations

import uuid

from probe_core import sparse
from probe_core.storage.edge import EdgeStore
from probe_core.storage.edge_wal import ROLL_MIN_BYTES, wal_bytes
from probe_core.storage.protocol import HybridQuery, StoreFilter, StorePoint

SEGMENT = 32 << 20


def _points(start: int, n: int) -> list[StorePoint]:
    filler = "x" * 4000  # ~4 KB logged a point: a segment fills after ~8,000
    return [StorePoint(id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"w{k}")), sparse=sparse.embed_document(f"word{k % 50} parse", 3.0),
                       payload={"workspace_id": "ws", "file_path": f"f{k}.py", "start_line": 1, "end_line": 2,
                                "symbol": filler}) for k in range(start, start + n)]


def _segments(store: EdgeStore) -> tuple[int, int, int]:
    """(closed segments, bytes in open segments, bytes in all) of the store's log."""
    wal = store.path / "wal"
    return len(list(wal.glob("closed-*"))), wal_bytes(wal, "open-"), wal_bytes(wal)


def test_the_log_is_cut_back_to_one_segment_and_nothing_is_lost(tmp_path):
    store = EdgeStore(tmp_path / "shard", "chunks_test")
    store.ensure_collection(8)
    for start in range(0, 11_000, 1000):  # ~44 MB logged: one closed segment, one part-written
        store.upsert(_points(start, 1000))
    store.flush()
    closed, open_bytes, total = _segments(store)
    assert closed >= 1 and open_bytes > ROLL_MIN_BYTES and total > SEGMENT + ROLL_MIN_BYTES

    freed = store.roll_wal()
    closed, open_bytes, after = _segments(store)
    assert freed > ROLL_MIN_BYTES and after == total - freed
    assert closed == 1 and open_bytes < 4 << 20 and after < SEGMENT + (4 << 20)
    assert store.count() == 11_000
    assert store.roll_wal() == 0  # nothing left to cut

    # an update of an existing point, then a reopen: kept (a segment removed by hand loses it)
    changed = _points(7, 1)[0]
    store.set_payload_ids([changed.id], {"symbol": "after the roll"})
    store.close()
    store = EdgeStore(tmp_path / "shard", "chunks_test")
    store.set_payload_ids([changed.id], {"symbol": "after the reopen"})
    store.upsert(_points(20_000, 10))
    store.close()
    store = EdgeStore(tmp_path / "shard", "chunks_test")
    try:
        hits = store.hybrid_query(HybridQuery(sparse=sparse.embed_query("word7 parse"), dense=None,
                                              filter=StoreFilter(file_paths=["f7.py"]), limit=5))
        assert [h.payload["symbol"] for h in hits] == ["after the reopen"]
        assert store.count() == 11_010
    finally:
        store.close()


def test_a_small_log_is_left_alone(tmp_path):
    store = EdgeStore(tmp_path / "shard", "chunks_test")
    store.ensure_collection(8)
    store.upsert(_points(0, 500))
    store.flush()
    before = _segments(store)
    try:
        assert store.roll_wal() == 0 and _segments(store) == before
    finally:
        store.close()
