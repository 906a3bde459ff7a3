"""The four phases of an index run, each on its own, on a real tree with the real engines (Qdrant
Edge, the packaged ONNX model, tree-sitter): what each decides and what each writes."""
from __future__ import annotations

import pytest

from probe_core import Workspace, index_workspace
from probe_core.chunking import chunk_file
from probe_core.indexing import lexical, profile
from probe_core.indexing.dense import fill_dense
from probe_core.indexing.indexer import decide_changes, open_run, remove_deleted
from probe_core.indexing.lexical import write_lexical
from probe_core.records import short_hash
from probe_core.storage.protocol import StoreFilter

from .test_indexer import expected_ids

NEW_FILE = "def rate_limit(calls: int, period: float) -> bool:\n    return calls < 10 * period\n"
EDITED = "def parse_cookie(header):\n    return header.split(';')\n"


def _ranges(chunks):
    return [(c.start_line, c.end_line, c.chunk_hash) for c in chunks]


def _store_paths(ws: Workspace) -> dict[str, int]:
    """file_path -> number of points the store holds for it."""
    out: dict[str, int] = {}
    for path in ws.store.all_ids(StoreFilter(workspace_id=ws.workspace_id)).values():
        out[path] = out.get(path, 0) + 1
    return out


@pytest.fixture
def changed_tree(repo):
    """The fixture repository indexed lexically, then changed: one file edited, one touched with
    the same bytes, one added, one deleted."""
    ws = Workspace.open(repo)
    index_workspace(ws, dense=False)
    (repo / "src/http/headers.py").write_text(EDITED)
    guide = repo / "docs/guide.md"
    guide.write_text(guide.read_text())
    (repo / "src/limits.py").write_text(NEW_FILE)
    (repo / "router/mux.go").unlink()
    yield ws
    ws.close()


def test_decide_changes_names_the_edited_and_new_files_and_writes_no_point(changed_tree):
    ws = changed_tree
    points_before = set(ws.store.all_ids())
    run, _, scanned = open_run(ws)
    work = list(decide_changes(run, scanned))
    assert [w.file.path for w in work] == ["src/http/headers.py", "src/limits.py"]
    for w, text in zip(work, (EDITED, NEW_FILE)):
        assert w.file_hash == short_hash(text)
        assert _ranges(w.chunks) == _ranges(chunk_file(w.file.path, text))
    # the touched file, and the three untouched ones, are unchanged; the deleted file is not its business
    assert run.report.files_unchanged == 4 and run.report.files_deleted == 0 and run.failed_now == 0
    assert set(ws.store.all_ids()) == points_before
    assert "router/mux.go" in ws.manifest.file_paths()


def test_decide_changes_records_a_file_the_chunker_refuses(changed_tree, monkeypatch):
    ws = changed_tree

    def broken(path, text):
        if path == "src/limits.py":
            raise RuntimeError("chunker bug")
        return chunk_file(path, text)

    monkeypatch.setattr(profile, "chunk_file", broken)  # the code profile's chunker
    run, _, scanned = open_run(ws)
    work = list(decide_changes(run, scanned))
    assert [w.file.path for w in work] == ["src/http/headers.py"]
    assert run.failed_now == 1
    assert ("src/limits.py", "chunking failed: chunker bug") in ws.manifest.errors()


def test_remove_deleted_drops_the_vanished_file_and_nothing_else(changed_tree):
    ws = changed_tree
    before = _store_paths(ws)
    run, _, scanned = open_run(ws)
    remove_deleted(run, scanned)
    assert run.report.files_deleted == 1
    assert "router/mux.go" not in ws.manifest.file_paths()
    after = _store_paths(ws)
    assert "router/mux.go" in before and "router/mux.go" not in after
    assert after == {p: n for p, n in before.items() if p != "router/mux.go"}


def test_remove_deleted_on_an_incremental_run_looks_only_at_its_paths(changed_tree):
    ws = changed_tree
    (ws.root / "config/settings.yaml").unlink()
    run, _, scanned = open_run(ws, paths=["config/settings.yaml"])
    remove_deleted(run, scanned)
    assert run.report.files_deleted == 1
    paths = ws.manifest.file_paths()
    assert "config/settings.yaml" not in paths and "router/mux.go" in paths


def test_write_lexical_stores_sparse_points_and_queues_them_for_dense(changed_tree):
    ws = changed_tree
    run, _, scanned = open_run(ws)
    work = list(decide_changes(run, scanned))
    remove_deleted(run, scanned)
    queued_before = {pid for pid, _, _ in ws.manifest.pending_dense(10_000)}
    old_version = {c.point_id for c in ws.manifest.chunks_for("src/http/headers.py")}
    write_lexical(run, work)
    # exactly the points a correct index of the changed tree holds, in the store and the manifest
    assert set(ws.store.all_ids()) == set(ws.manifest.chunk_ids()) == expected_ids(ws)
    new_ids = {c.point_id for w in work for c in ws.manifest.chunks_for(w.file.path)}
    assert len(new_ids) == sum(len(w.chunks) for w in work) == run.report.chunks_indexed > 0
    assert run.report.files_indexed == 2 and not new_ids & old_version
    assert ws.store.dense_vectors(sorted(new_ids)) == {}  # lexical only: the dense phase attaches vectors
    # the new chunks wait for dense vectors; the edited file's old version left the queue with it
    assert {pid for pid, _, _ in ws.manifest.pending_dense(10_000)} == (queued_before - old_version) | new_ids


def test_fill_dense_attaches_a_vector_to_every_queued_chunk(changed_tree):
    ws = changed_tree
    queued = len(ws.manifest.pending_dense(10_000))
    assert queued == ws.manifest.counts()["chunks"] > 0
    assert fill_dense(ws) == queued
    assert ws.manifest.pending_dense(10) == []
    counts = ws.manifest.counts()
    assert counts["chunks_dense"] == counts["chunks"]
    vectors = ws.store.dense_vectors(list(ws.manifest.chunk_ids()))
    assert len(vectors) == counts["chunks"] and all(v.shape == (384,) for v in vectors.values())


def test_write_lexical_flushes_the_store_after_each_batch(changed_tree, monkeypatch):
    """Qdrant Edge's memory grows with the points written since its last flush (docs/benchmarks.md):
    the streamed lexical phase persists the store once per batch."""
    ws = changed_tree
    (ws.root / "src/more.py").write_text(NEW_FILE.replace("rate_limit", "burst_limit"))
    flushes = []
    real_flush = ws.store.flush
    monkeypatch.setattr(ws.store, "flush", lambda: (flushes.append(1), real_flush()))
    monkeypatch.setattr(lexical, "BATCH_FILES", 1)
    run, _, scanned = open_run(ws)
    write_lexical(run, decide_changes(run, scanned))
    assert run.report.files_indexed == 3 and len(flushes) == 3
    assert set(ws.store.all_ids()) == set(ws.manifest.chunk_ids())
