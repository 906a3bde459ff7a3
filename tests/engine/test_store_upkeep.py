"""Once the dense fill has finished and the owner has been idle a while, it optimizes a store that
was written a lot since its last optimization, in a child process (``storage/edge_optimize.py``),
and answers the same afterwards; then it compacts the manifest and cuts the store's log back (real Qdrant Edge, real ONNX embedder, a real child process)."""
from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from probe_core.engine.service import OwnerEngine
from probe_core.engine.settings import EngineSettings
from probe_core.indexing import scheduler
from probe_core.storage.edge import EdgeStore

from ..registry.test_heartbeat import wait_for
from ..storage.test_edge_optimize import small_threshold

QUERIES = ["fuse ranked lists with reciprocal rank", "read a snippet from disk", "merge hits into ranges",
           "LruCache", "query intent identifiers"]
RETRIEVAL = Path(__file__).resolve().parents[2] / "probe_core" / "retrieval"  # real, varied code (~200 chunks)


def answers(engine: OwnerEngine) -> list:
    return [[(r["path"], r["start_line"], r["end_line"], round(r["score"], 6)) for r in engine.search(q, top_k=8)["results"]]
            for q in QUERIES]


def test_the_idle_owner_optimizes_the_store_after_the_fill(tmp_path, monkeypatch):
    small_threshold(monkeypatch)  # a test-sized shard worth optimizing
    monkeypatch.setattr(scheduler, "OPTIMIZE_MIN_POINTS", 50)
    compacted, real_compact = [], scheduler.compact_manifest

    def compact(path):  # the real compaction, recorded
        compacted.append((path, real_compact(path)))
        return compacted[-1][1]
    monkeypatch.setattr(scheduler, "compact_manifest", compact)
    rolled, real_roll = [], EdgeStore.roll_wal

    def roll(store):  # the real cut of the store's log, recorded
        rolled.append((len(compacted), real_roll(store)))
        return rolled[-1][1]
    monkeypatch.setattr(EdgeStore, "roll_wal", roll)
    root = tmp_path / "repo"
    shutil.copytree(RETRIEVAL, root / "retrieval", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setenv("PROBE_WATCH", "0")
    monkeypatch.setenv("PROBE_OPTIMIZE_IDLE_S", "0")  # not yet: the answers before it first
    engine = OwnerEngine(root, EngineSettings.from_env(), serve_rpc=False).start()
    try:
        wait_for(lambda: engine.index_status()["first_scan_done"] and not engine._sched.dense_pending, timeout=300,
                 what="the dense fill to finish")
        assert engine._sched.optimize_wanted
        before, segments = answers(engine), engine._ws.store._s().info().segments_count
        engine.settings = dataclasses.replace(engine.settings, optimize_idle_s=0.5)
        # the upkeep's last step: it compacts the manifest and rolls the log after marking the store optimized
        wait_for(lambda: not engine._sched.optimize_wanted, timeout=300, what="the store upkeep")
        assert engine._ws.manifest.get_meta(scheduler.UNOPTIMIZED_KEY) == "0"
        assert engine._ws.store._s().info().segments_count != segments
        assert not engine._sched.optimize_wanted
        assert answers(engine) == before
        # the manifest was compacted after it (its WAL folded in: bytes given back, or none to give)
        assert [p for p, _ in compacted] == [engine._ws.manifest.path] and compacted[0][1] is not None
        assert rolled == [(1, 0)]  # then the log, after the compaction (this small a log is left alone)
    finally:
        engine.close()
