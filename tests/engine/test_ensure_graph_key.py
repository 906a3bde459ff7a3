"""``ensure_graph`` (run before every code-intelligence answer) compares the graph with the manifest
only when the lexical state moved since the last time they matched: a warm call skips the compare,
the dense fill does not count as a change, an indexed edit does. Real index, graph and embedder."""
from __future__ import annotations

from probe_core import Workspace, index_workspace
from probe_core.engine.answers import intel_answer
from probe_core.indexing.indexer import fill_dense
from probe_core.intel.store import GraphStore

from ..conftest import REPO_FILES, write_tree
from ..registry.test_heartbeat import wait_for


def test_a_warm_intel_call_skips_the_graph_compare(tmp_path, monkeypatch):
    root = write_tree(tmp_path / "repo", REPO_FILES)
    ws = Workspace.open(root)
    try:
        index_workspace(ws, dense=False)
        compares = []
        real = GraphStore.out_of_step
        monkeypatch.setattr(GraphStore, "out_of_step", lambda self: compares.append(1) or real(self))

        def callers() -> list[str]:
            return [i["path"] for i in intel_answer(ws, "find_callers", {"symbol": "hash_password"})["items"]]

        assert "src/auth/passwords.py" in callers()
        first = len(compares)
        assert first >= 1
        callers()
        assert len(compares) == first, "a warm call compared the graph with the manifest again"
        fill_dense(ws, batch=2)
        callers()
        assert len(compares) == first, "the dense fill made the next call compare again"
        (root / "tests" / "test_more.py").write_text(
            "from src.auth.passwords import hash_password\n\n\ndef test_more():\n    hash_password('x')\n")
        index_workspace(ws, dense=False, paths=["tests/test_more.py"])
        assert "tests/test_more.py" in callers()
        assert len(compares) > first  # an indexed change: compared again
    finally:
        ws.close()


def test_an_owner_without_a_watcher_does_not_compare_the_graph_on_every_call(tmp_path, monkeypatch):
    """With the watcher off the owner drops its cached answers before each search (an edit may have
    happened unseen); that is not a change of the index, so the graph is not compared again."""
    from probe_core.engine.service import OwnerEngine
    from probe_core.engine.settings import EngineSettings

    monkeypatch.setenv("PROBE_WATCH", "0")
    root = write_tree(tmp_path / "repo", REPO_FILES)
    engine = OwnerEngine(root, EngineSettings.from_env(), serve_rpc=False).start()
    try:
        wait_for(lambda: engine.index_status()["first_scan_done"], timeout=120, what="the startup scan")
        wait_for(lambda: not engine.index_status()["indexing_in_progress"], timeout=300, what="the dense fill")
        engine.search("hash_password")  # the first: may compare
        assert engine.intel("find_callers", {"symbol": "hash_password"})["items"]
        compares = []
        real = GraphStore.out_of_step
        monkeypatch.setattr(GraphStore, "out_of_step", lambda self: compares.append(1) or real(self))
        for _ in range(3):
            engine.search("hash_password")
            engine.intel("find_callers", {"symbol": "hash_password"})
        assert compares == [], "searches with the watcher off compared the graph with the manifest again"
    finally:
        engine.close()
