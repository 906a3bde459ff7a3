"""The dense queue without texts (``storage/dense_queue.py`` ``FROM_FILE``): a chunk indexed by the
worker processes queues no text when it is its file's lines, and the fill reads them again from the
file version it was indexed from (``indexing/dense.py``). Real engines (Qdrant Edge, the packaged
ONNX model, tree-sitter), real worker processes, a real git repository for branches."""
from __future__ import annotations

import sqlite3

import pytest

from probe_core import Workspace, index_workspace
from probe_core.chunking import chunk_file
from probe_core.indexing import indexer
from probe_core.indexing.dense import fill_dense
from probe_core.indexing.encode import index_text

from .test_branches import MAIN_A, git, two_branches  # noqa: F401 - a fixture

EDITED = "def parse_cookie(header):\n    return header.split(';')\n"


@pytest.fixture(autouse=True)
def pooled(monkeypatch):
    """Every run chunks in two worker processes, however small the tree."""
    monkeypatch.setenv("PROBE_INDEX_WORKERS", "2")
    monkeypatch.setattr(indexer, "MIN_POOL_BYTES", 0)


def _spy(ws: Workspace, monkeypatch) -> list[str]:
    """Every text the workspace's embedder is given from now on."""
    seen: list[str] = []
    real = ws.embedder.embed_documents

    def embed(texts):
        seen.extend(texts)
        return real(texts)

    monkeypatch.setattr(ws.embedder, "embed_documents", embed)
    return seen


def _queued(ws: Workspace) -> tuple[int, int]:
    con = sqlite3.connect(ws.probe_dir / "manifest.sqlite")
    try:
        return con.execute("SELECT COUNT(*), COALESCE(SUM(length(text) = 0), 0) FROM pending_dense").fetchone()
    finally:
        con.close()


def _index_texts(ws: Workspace, path: str, text: str) -> set[str]:
    return {index_text(c) for c in chunk_file(path, text)}


def test_the_fill_embeds_each_chunk_once_with_the_text_it_was_indexed_with(repo, monkeypatch):
    """A line longer than the chunker keeps is cut short in its chunk: not the file's lines, so its
    text is queued as before."""
    (repo / "src" / "table.py").write_text("DATA = [" + ", ".join(str(i) for i in range(2000)) + "]\n")
    ws = Workspace.open(repo)
    index_workspace(ws, dense=False)
    chunks = ws.manifest.counts()["chunks"]
    stored, from_file = _queued(ws)
    assert stored == chunks > 0 and from_file > 0.8 * chunks  # the lines of their files: no text kept
    seen = _spy(ws, monkeypatch)
    assert fill_dense(ws, batch=3) == chunks  # batches that cross files
    assert len(seen) == len(set(seen)) == chunks
    expected = set()
    for path in ws.manifest.file_paths():
        expected |= _index_texts(ws, path, (repo / path).read_text())
    assert set(seen) == expected
    assert ws.manifest.pending_dense(10) == [] and ws.manifest.counts()["chunks_dense"] == chunks
    ws.close()


def test_a_chunk_whose_file_changed_before_the_fill_leaves_the_queue_and_its_new_version_fills(
        repo, monkeypatch):
    ws = Workspace.open(repo)
    index_workspace(ws, dense=False)
    path = "src/http/headers.py"
    old = {pid for pid, p in ws.manifest.chunk_ids().items() if p == path}
    (repo / path).write_text(EDITED)  # not indexed yet: the queued lines are not on disk any more
    seen = _spy(ws, monkeypatch)
    assert fill_dense(ws) == ws.manifest.counts()["chunks"] - len(old)
    assert not any("parse_cookie" in t for t in seen)  # never the new file's lines under the old chunks
    assert ws.manifest.pending_dense(10) == [] and ws.manifest.without_dense(list(old)) == old
    index_workspace(ws)  # the edit is indexed: its chunks are queued and filled
    assert any("parse_cookie" in t for t in seen)
    counts = ws.manifest.counts()
    assert counts["chunks_dense"] == counts["chunks"]
    ws.close()


def test_an_edit_undone_before_the_next_scan_queues_the_dropped_chunks_again(repo, monkeypatch):
    import os

    ws = Workspace.open(repo)
    index_workspace(ws, dense=False)
    path = repo / "src/http/headers.py"
    original = path.read_text()
    path.write_text(EDITED)
    fill_dense(ws)  # the queued lines are not on disk: dropped
    assert ws.manifest.counts()["chunks_dense"] < ws.manifest.counts()["chunks"]
    path.write_text(original)
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    seen = _spy(ws, monkeypatch)
    index_workspace(ws)  # the same text as indexed: only touched, and its chunks are queued again
    assert _index_texts(ws, "src/http/headers.py", original) <= set(seen)
    counts = ws.manifest.counts()
    assert counts["chunks_dense"] == counts["chunks"]
    ws.close()


def test_a_kept_branch_version_dropped_by_the_fill_is_queued_again_when_revived(two_branches, monkeypatch):  # noqa: F811
    root = two_branches
    ws = Workspace.open(root)
    index_workspace(ws, dense=False)  # main: a.py's main version queued as lines of the file
    git(root, "checkout", "-q", "feature")
    index_workspace(ws, dense=False)  # main's a.py kept for main, still queued
    seen = _spy(ws, monkeypatch)
    fill_dense(ws)  # main's a.py is not on disk: it leaves the queue without a vector
    assert not any("alpha_checksum" in t for t in seen)
    counts = ws.manifest.counts()
    assert counts["chunks_dense"] < counts["chunks"]
    git(root, "checkout", "-q", "main")
    index_workspace(ws)  # revived, not re-chunked: queued again and filled from the file
    assert _index_texts(ws, "a.py", MAIN_A) <= set(seen)
    counts = ws.manifest.counts()
    assert counts["chunks_dense"] == counts["chunks"]
    ws.close()


POOLED_INDEX = """import sys
from probe_core.indexing import indexer
indexer.MIN_POOL_BYTES = 0
from probe_core import Workspace, index_workspace
index_workspace(Workspace.open(sys.argv[1]))
"""


def test_kill_9_mid_fill_then_the_next_run_fills_the_rest_exactly_once(tmp_path, monkeypatch):
    import os
    import signal
    import subprocess
    import sys
    import time

    from .test_crash_recovery import _count, index_cli, make_repo
    from .test_indexer import assert_exact

    root = make_repo(tmp_path / "repo", 40)
    db = root / ".probe" / "manifest.sqlite"
    proc = subprocess.Popen([sys.executable, "-c", POOLED_INDEX, str(root)], stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while _count(db, "SELECT COUNT(*) FROM chunks WHERE has_dense=1") < 32:
        assert proc.poll() is None, proc.stderr.read().decode()[-500:]
        assert time.monotonic() < deadline, "kill point never reached"
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    ws = Workspace.open(root)
    total, done = ws.manifest.counts()["chunks"], ws.manifest.counts()["chunks_dense"]
    queued, from_file = _queued(ws)
    assert 0 < done < total and queued == total - done and from_file > 0
    ws.close()
    index_cli(root)
    ws = Workspace.open(root)
    try:
        assert_exact(ws)
        counts = ws.manifest.counts()
        assert counts["chunks_dense"] == counts["chunks"] == total == ws.store.count(with_dense=True)
        assert ws.manifest.pending_dense(10) == []
    finally:
        ws.close()
