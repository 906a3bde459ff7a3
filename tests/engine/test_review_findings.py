"""Findings of the code review of issues 18-20 (docs/reliability.md, "Review findings"), each
checked on the real engine: real Qdrant Edge, real manifest, the packaged embedder."""
from __future__ import annotations

import threading

import probe_core.indexing.indexer as indexer
from probe_core.engine.service import OwnerEngine
from probe_core.engine.settings import EngineSettings
from probe_core.indexing.indexer import index_workspace
from probe_core.workspace import Workspace

from ..conftest import REPO_FILES, write_tree
from ..registry.test_heartbeat import wait_for


def _indexed(root):
    write_tree(root, REPO_FILES)
    ws = Workspace.open(root)
    try:
        index_workspace(ws, dense=False)
    finally:
        ws.close()
    return root


def test_the_startup_scan_of_an_unchanged_tree_is_no_pending_update(tmp_path, monkeypatch):
    """A restarted owner re-checks the tree (its startup scan) before anything is known to have
    changed: searches meanwhile must not say an update is pending. A change the owner does know of
    (a requested path) still does."""
    root = _indexed(tmp_path / "repo")
    monkeypatch.setenv("PROBE_WATCH", "0")
    scanning, release = threading.Event(), threading.Event()
    real = indexer.index_workspace

    def held_scan(*args, **kwargs):  # the real scan, held at its start so a search meets it running
        scanning.set()
        release.wait(60)
        return real(*args, **kwargs)

    monkeypatch.setattr(indexer, "index_workspace", held_scan)
    engine = OwnerEngine(root, EngineSettings.from_env(), serve_rpc=False).start()
    try:
        assert scanning.wait(60), "the startup scan never started"
        out = engine.search("hash_password")
        assert not out.get("index_update_pending"), out.get("message")
        assert "pending" not in (out.get("message") or "")
        assert any(r["path"] == "src/auth/passwords.py" for r in out["results"])
        engine.request_scan(["src/auth/passwords.py"])  # a change seen: that one is pending
        assert engine.search("hash_password").get("index_update_pending") is True
    finally:
        release.set()
        wait_for(lambda: engine.index_status()["first_scan_done"], timeout=60, what="the startup scan")
        engine.close()


def test_a_failed_rebuild_on_open_closes_the_workspace_it_opened(tmp_path, monkeypatch):
    """Damage recorded, and the rebuild cannot finish (the Qdrant server it must clear is down):
    the owner's open fails and is retried; the workspace each failed try opened (its store client,
    its embedder) is closed, not left for every retry to add another."""
    from probe_core.storage.damage import record_damage
    from probe_core.workspace import Workspace

    root = _indexed(tmp_path / "repo")
    record_damage(root / ".probe", "the vector store at x is damaged (test); run `probe index --rebuild`")
    monkeypatch.setenv("PROBE_WATCH", "0")
    monkeypatch.setenv("QDRANT_URL", "http://127.0.0.1:9")  # nothing listens: refused at once
    opened, closed = [], []
    real_open, real_close = Workspace.open.__func__, Workspace.close  # counted, then the real ones
    monkeypatch.setattr(Workspace, "open",
                        classmethod(lambda cls, *a, **k: opened.append(1) or real_open(cls, *a, **k)))
    monkeypatch.setattr(Workspace, "close", lambda self: closed.append(1) or real_close(self))
    engine = OwnerEngine(root, EngineSettings.from_env(), serve_rpc=False).start()
    try:
        failed = wait_for(lambda: (st := engine.index_status()).get("last_error") and st, timeout=60,
                          what="the open to fail")
        assert "127.0.0.1:9" in failed["last_error"] or "unreachable" in failed["last_error"], failed
        assert opened
    finally:
        engine.close()
    assert len(closed) == len(opened), f"{len(opened)} workspaces opened, {len(closed)} closed"
