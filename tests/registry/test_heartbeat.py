"""The owner engine's registry heartbeat: a running, idle owner keeps its workspace's ``last_seen_at``
fresh (locally and in the server's ``probe_workspaces``) with no file change and no scan, so
`probe prune` on another machine never takes a live workspace for a stale one."""
from __future__ import annotations

import dataclasses
import time

import pytest

from probe_core.config import load_config
from probe_core.engine.service import OwnerEngine
from probe_core.engine.settings import EngineSettings
from probe_core.registry import RECORD_INTERVAL_S, SERVER_MIN_AGE_S, Registry, prune, server_records, server_upsert

DAY = 86400.0


def wait_for(check, *, timeout: float, what: str):
    """Poll ``check`` until it returns something truthy; return that."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def test_record_interval_from_env():
    assert EngineSettings.from_env({}).record_interval_s == RECORD_INTERVAL_S == 300.0
    assert EngineSettings.from_env({"PROBE_RECORD_INTERVAL_S": "0.5"}).record_interval_s == 0.5
    # never longer than prune's server floor assumes
    assert EngineSettings.from_env({"PROBE_RECORD_INTERVAL_S": "3600"}).record_interval_s == RECORD_INTERVAL_S
    assert SERVER_MIN_AGE_S >= 2 * RECORD_INTERVAL_S


@pytest.mark.parametrize("backend", ["edge", "qdrant-local"])
def test_idle_owner_keeps_its_workspace_fresh(backend, repo, tmp_path, monkeypatch):
    if backend == "qdrant-local":
        monkeypatch.setenv("QDRANT_URL", f"local:{tmp_path / 'qdrant-local'}")
    else:
        monkeypatch.delenv("QDRANT_URL", raising=False)
    monkeypatch.setenv("PROBE_RECORD_INTERVAL_S", "0.2")
    monkeypatch.setenv("PROBE_WATCH", "0")  # no watcher, no scans: only the heartbeat can record
    settings = EngineSettings.from_env()
    assert settings.record_interval_s == 0.2 and not settings.watch
    engine = OwnerEngine(repo, settings, serve_rpc=False).start()
    try:
        def idle():
            st = engine.index_status()
            done = st["first_scan_done"] and not st["indexing_in_progress"] and st["progress"]["phase"] == "idle"
            return st if done else None

        scans = wait_for(idle, timeout=240, what="the first scan and the dense fill")["scans_completed"]
        wid = load_config(repo).workspace_id
        reg = Registry()
        assert reg.get(wid) is not None  # recorded when the backends opened
        ws = engine._ws
        client = getattr(ws.store, "client", None)
        assert (client is not None) == (backend == "qdrant-local")

        def server_seen() -> float | None:
            if client is None:
                return None
            with ws.store._lock:  # local mode: the engine's own client is the only one
                recs = {r.workspace_id: r for r in server_records(client)}
            return recs[wid].last_seen_at if wid in recs else None

        for _ in range(2):  # it keeps beating
            long_ago = time.time() - 40 * DAY
            reg.set_last_seen(wid, long_ago)
            if client is not None:
                old = dataclasses.replace(reg.get(wid), url=None)
                server_upsert(client, old, lock=ws.store._lock)
                assert server_seen() == long_ago
            wait_for(lambda: reg.get(wid).last_seen_at > long_ago + 39 * DAY, timeout=60, what="a local heartbeat")
            if client is not None:
                wait_for(lambda: server_seen() > long_ago + 39 * DAY, timeout=60, what="a server heartbeat")

        assert engine.index_status()["scans_completed"] == scans  # no scan did it
        assert engine.index_status()["progress"]["phase"] == "idle"
        if client is None:  # (local mode admits one client per path: prune cannot read the server here)
            assert prune(30 * DAY).entries == []  # fresh, not merely skipped as in use
    finally:
        engine.close()
