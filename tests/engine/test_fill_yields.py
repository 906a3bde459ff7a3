"""The owner's dense fill yields to searches: while one runs, no new batch starts (the embedding in
flight is stopped: ``tests/indexing/test_fill_sub_batches.py``), and the fill picks up again when it
ends (real Qdrant Edge, real ONNX embedder)."""
from __future__ import annotations

import time

from probe_core.engine.service import OwnerEngine
from probe_core.engine.settings import EngineSettings

from ..indexing.test_crash_recovery import make_repo
from ..registry.test_heartbeat import wait_for

BATCH = 4


def test_the_dense_fill_pauses_while_a_search_runs(tmp_path, monkeypatch):
    root = make_repo(tmp_path / "repo", 60)  # ~180 chunks: many batches
    monkeypatch.setenv("PROBE_WATCH", "0")
    monkeypatch.setenv("PROBE_DENSE_BATCH", str(BATCH))
    engine = OwnerEngine(root, EngineSettings.from_env(), serve_rpc=False).start()
    dense = lambda: engine._ws.manifest.counts()["chunks_dense"]  # noqa: E731
    try:
        wait_for(lambda: engine.index_status()["first_scan_done"] and dense() > 0, timeout=180,
                 what="the dense fill to start")
        with engine._searching():  # a search in flight, as long as this block runs
            at_start = dense()
            time.sleep(3)  # many batches' worth of time
            assert dense() - at_start <= BATCH  # at most the batch that was already running
        wait_for(lambda: dense() > at_start + BATCH, timeout=120, what="the fill to resume after the search")
    finally:
        engine.close()
