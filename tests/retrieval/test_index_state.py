"""What search keeps between queries from the manifest (chunk counts, per-file chunk maps) is
dropped by every write: an edit, a new file, a batch of the dense fill (real index, real ONNX
embedder for the fill)."""
from __future__ import annotations

from probe_core import Workspace, index_workspace, search
from probe_core.indexing.indexer import fill_dense
from probe_core.retrieval.chunk_locator import ChunkLocator
from probe_core.retrieval.index_state import index_state

ONE = "def alpha():\n    return 1\n\n\ndef beta():\n    return 2\n"


def test_counts_follow_edits_and_the_fill(tmp_path):
    (tmp_path / "a.py").write_text(ONE)
    ws = Workspace.open(tmp_path)
    index_workspace(ws, dense=False)
    assert search(ws, "alpha").dense_coverage == 0.0
    first = index_state(ws).counts(ws)
    assert first == ws.manifest.counts()
    (tmp_path / "b.py").write_text("def gamma():\n    return 3\n")
    index_workspace(ws, dense=False)  # a new file: more chunks
    assert index_state(ws).counts(ws) == ws.manifest.counts() != first
    batches = iter([False, True])  # one batch of vectors: the coverage moves without a new generation
    assert fill_dense(ws, batch=1, should_stop=lambda: next(batches)) == 1
    after = search(ws, "gamma")
    assert 0.0 < after.dense_coverage == ws.manifest.counts()["chunks_dense"] / ws.manifest.counts()["chunks"]
    ws.close()


def test_chunk_maps_follow_an_edit(tmp_path):
    (tmp_path / "a.py").write_text(ONE)
    ws = Workspace.open(tmp_path)
    index_workspace(ws, dense=False)
    before = ChunkLocator(ws).at("a.py", 5)
    assert before is not None and before.symbol == "beta"
    (tmp_path / "a.py").write_text("import os\n\n\n\n" + ONE)  # beta moves down four lines
    index_workspace(ws, dense=False)
    assert ChunkLocator(ws).at("a.py", 9).symbol == "beta"
    assert ChunkLocator(ws).at("a.py", 5).symbol == "alpha"
    ws.close()
