"""``ensure_graph`` (run before every code-intelligence answer) compares the graph with the manifest
only when the lexical state moved since the last time they matched: a warm call skips the compare,
the dense fill does not count as a change, an indexed edit does. Real index, graph and embedder."""
from __future__ import annotations

from probe_core import Workspace, index_workspace
from probe_core.engine.answers import intel_answer
from probe_core.indexing.indexer import fill_dense
from probe_core.intel.store import GraphStore

from ..conftest import REPO_FILES, write_tree


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
