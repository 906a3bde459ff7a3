"""The owner engine after a failure it recovers from: once work moves forward again, the old error
stops describing it (``index_status``, searches' "paused" note, ``probe index --wait``'s stuck check)
and a daemon counts as busy, not idle (it must not exit with vectors still queued)."""
from __future__ import annotations

import time

from probe_core.engine.service import OwnerEngine
from probe_core.engine.settings import EngineSettings

from ..indexing.test_crash_recovery import make_repo
from ..registry.test_heartbeat import wait_for


def test_a_recovered_dense_fill_clears_the_error_while_it_runs(tmp_path, monkeypatch):
    root = make_repo(tmp_path / "repo", 60)  # ~180 chunks: many batches of 4
    monkeypatch.setenv("PROBE_WATCH", "0")
    monkeypatch.setenv("PROBE_DENSE_BATCH", "4")
    monkeypatch.setenv("PROBE_MIN_FREE_MB", "0")
    engine = OwnerEngine(root, EngineSettings.from_env(), serve_rpc=False).start()
    try:
        wait_for(lambda: engine.index_status()["first_scan_done"], timeout=120, what="the lexical scan")
        monkeypatch.setenv("PROBE_MIN_FREE_MB", str(10**9))  # the disk "fills": the dense fill stops
        failed = wait_for(lambda: (st := engine.index_status()).get("last_error") and st, timeout=120,
                          what="the dense fill to stop on a full disk")
        assert "free" in failed["last_error"] and failed["progress"]["chunks_embedded"] < failed["chunks_indexed"]
        monkeypatch.setenv("PROBE_MIN_FREE_MB", "0")  # space is back: the worker retries by itself

        seen_recovered_mid_fill = False
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            st = engine.index_status()
            if not st["indexing_in_progress"]:
                break
            if st.get("last_error") is None and st["progress"]["chunks_embedded"] > failed["progress"]["chunks_embedded"]:
                seen_recovered_mid_fill = True
                assert engine.idle_seconds() == 0.0  # working: a daemon would not exit now
                break
            time.sleep(0.02)
        assert seen_recovered_mid_fill, "the old error stayed until the whole dense fill had finished"
        done = wait_for(lambda: (st := engine.index_status()) and not st["indexing_in_progress"] and st,
                        timeout=240, what="the dense fill to finish")
        assert done.get("last_error") is None and done["chunks_embedded"] == done["chunks_indexed"]
    finally:
        engine.close()
