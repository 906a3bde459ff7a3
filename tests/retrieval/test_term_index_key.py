"""The term index's list of unposted files (a join of the manifest's files with the graph's) is
kept until the lexical state changes: the dense fill, which writes after every batch, does not
make the next search rerun it; an edit indexed lexically does. Real index, embedder and graph."""
from __future__ import annotations

from probe_core import Workspace, index_workspace
from probe_core.indexing.indexer import fill_dense
from probe_core.intel.store import GraphStore
from probe_core.retrieval import literals
from probe_core.retrieval.query_intent import parse_query

from ..conftest import REPO_FILES, write_tree


def test_unposted_files_reruns_only_when_the_lexical_state_changed(tmp_path, monkeypatch):
    root = write_tree(tmp_path / "repo", REPO_FILES)
    ws = Workspace.open(root)
    try:
        index_workspace(ws, dense=False)
        runs = []
        real = GraphStore.unposted_files
        monkeypatch.setattr(GraphStore, "unposted_files", lambda self: runs.append(1) or real(self))

        def exact():
            out = literals.exact_lists(ws, parse_query("hash_password"), lambda *_: True)
            assert out.identifier, "the identifier list found nothing"

        exact()
        assert len(runs) == 1
        assert fill_dense(ws, batch=2) > 2  # several batches, each a write and a touch of the workspace
        exact()
        assert len(runs) == 1, "the dense fill made the term index rerun unposted_files()"
        (root / "src" / "auth" / "passwords.py").write_text(REPO_FILES["src/auth/passwords.py"] + "\nX = 1\n")
        index_workspace(ws, dense=False, paths=["src/auth/passwords.py"])
        exact()
        assert len(runs) == 2  # a lexical change: the list is read again
    finally:
        ws.close()
