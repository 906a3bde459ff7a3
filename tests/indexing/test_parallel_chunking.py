"""Chunking and graphing in worker processes (``indexing/prepare_pool.py``) against the serial
path, on a real tree (Probe's own source and the multi-language intel fixtures) with the real
engines: the same chunks, the same symbol graph, the same search results. The serial run writes
file by file (``lexical.write_file``, as an index that already has chunks does); the pooled run is
a new index's: the workers make the points' ids, sparse vectors and compressed texts
(``indexing/encode.py``) and the writer stores each batch at once (``lexical.write_new_files``):
the same points, vectors and payloads."""
from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sysconfig
import time
from pathlib import Path

import pytest

import probe_core
import probe_core.sparse
from probe_core import Workspace, index_workspace, search
from probe_core.errors import ConfigError
from probe_core.indexing import indexer, lexical
from probe_core.indexing.prepare_pool import index_workers
from probe_core.intel import postings

from .test_crash_recovery import PROBE, _count, index_cli
from .test_indexer import assert_exact

HERE = Path(__file__).resolve().parent
QUERIES = ["chunk a file with tree-sitter", "reconcile the store after a crash", "HeaderParser parse_line",
           "def index_workspace", "dense vectors fill order", "ServeHTTP", "impl Display for", "BM25 average length"]

GRAPH_SQL = {
    "files": "SELECT path, file_hash, language, lines FROM graph_files",
    "symbols": "SELECT f.path, s.name, s.qualname, s.kind, s.line, s.end_line, s.signature, s.doc, s.parent, f.language FROM graph_symbols s JOIN graph_files f ON f.id = s.file",
    "edges": "SELECT path, line, child, parent, kind, parent_qualifier FROM graph_edges",
    "postings": "SELECT t.term, f.path FROM graph_postings p JOIN graph_terms t ON t.id = p.term"
                " JOIN json_each(posting_files(p.files)) j JOIN graph_files f ON f.id = j.value",
}
MANIFEST_SQL = {
    "chunks": "SELECT point_id, p.path, chunk_idx, start_line, end_line, chunk_hash, symbol, symbol_kind,"
              " parent_symbol FROM chunks c JOIN paths p ON p.id = c.file",
    "files": "SELECT path, file_hash, language, last_error FROM files",
    "queued": "SELECT q.point_id, p.path FROM pending_dense q JOIN chunks c USING (point_id) JOIN paths p ON p.id = c.file",  # the texts: ``test_same_texts_to_embed``
    "meta": "SELECT key, value FROM meta WHERE key = 'bm25_avg_len'",
}


def _tree(dest: Path) -> Path:
    shutil.copytree(Path(probe_core.__file__).parent, dest / "probe_core",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copytree(HERE.parent / "fixtures" / "intel", dest / "fixtures")
    return dest


def _rows(db: Path, sql: dict[str, str]) -> dict[str, list]:
    con = sqlite3.connect(db)
    postings.readable(con)
    try:
        return {k: sorted(con.execute(q).fetchall(), key=repr) for k, q in sql.items()}
    finally:
        con.close()


def _answers(ws: Workspace) -> list:
    return [[(r.path, r.start_line, r.end_line, round(r.score, 6)) for r in search(ws, q, top_k=10).results]
            for q in QUERIES]


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """One tree indexed twice, lexically, under one workspace id, in small lexical batches (so the
    stream crosses several batches): serially and file by file, and by two workers (the pool's
    size threshold lowered to this tree's ~2 MB) as a new index."""
    serial_root = _tree(tmp_path_factory.mktemp("serial"))
    pooled_root = tmp_path_factory.mktemp("pooled")
    shutil.copytree(serial_root, pooled_root, dirs_exist_ok=True)
    mp = pytest.MonkeyPatch()
    calls = []
    real = indexer.prepare_all

    def spy(*args, **kwargs):
        calls.append(kwargs["workers"])
        yield from real(*args, **kwargs)

    try:
        mp.setattr(indexer, "prepare_all", spy)
        # both runs stream 100 kB batches, so both measure BM25's average length on a sample
        # before writing (recorded rounded: a tree of one batch writes its first run unrounded)
        mp.setattr(lexical, "BATCH_BYTES", 100_000)
        mp.setenv("PROBE_INDEX_WORKERS", "1")
        serial = Workspace.open(serial_root)
        mp.setattr(serial.manifest, "has_chunks", lambda: True)  # not fresh: the per-file writer
        serial_writes = _count_writes(mp, serial)
        serial_report = index_workspace(serial, dense=False)
        assert calls == []  # one worker: the serial path
        shutil.copytree(serial_root / ".probe", pooled_root / ".probe",
                        ignore=shutil.ignore_patterns("store", "manifest.sqlite*"))  # config.json: the same workspace id
        mp.setenv("PROBE_INDEX_WORKERS", "2")
        mp.setattr(indexer, "MIN_POOL_BYTES", 100_000)
        pooled = Workspace.open(pooled_root)
        pooled_writes = _count_writes(mp, pooled)
        pooled_report = index_workspace(pooled, dense=False)
        assert calls == [2]
    finally:
        mp.undo()
    assert serial.workspace_id == pooled.workspace_id
    assert serial_writes["embed_document"] == serial_report.chunks_indexed  # the writer made every vector
    yield serial, serial_report, pooled, pooled_report, pooled_writes
    serial.close()
    pooled.close()


def _count_writes(mp: pytest.MonkeyPatch, ws: Workspace) -> dict[str, int]:
    """Counts, from now on, ``ws``'s store upserts and manifest file writes, and the sparse vectors
    this process makes (a worker process's are not counted)."""
    seen = {"upsert": 0, "replace_file": 0, "add_files": 0, "embed_document": 0}
    for obj, name in ((ws.store, "upsert"), (ws.manifest, "replace_file"), (ws.manifest, "add_files"),
                      (probe_core.sparse, "embed_document")):
        real = getattr(obj, name)

        def counted(*args, _real=real, _name=name, **kwargs):
            seen[_name] += 1
            return _real(*args, **kwargs)

        mp.setattr(obj, name, counted)
    return seen


def test_the_tree_spans_many_lexical_batches(both):
    serial, report, *_ = both
    assert sum(f.stat().st_size for f in serial.root.rglob("*.py")) > 500_000  # five batches of 100 kB
    assert report.files_indexed > 150 and report.chunks_indexed > 1000


def test_same_reports_and_points(both):
    serial, serial_report, pooled, pooled_report, _ = both
    for key in ("files_seen", "files_indexed", "files_unchanged", "files_failed", "chunks_indexed"):
        assert getattr(serial_report, key) == getattr(pooled_report, key), key
    assert set(serial.store.all_ids()) == set(pooled.store.all_ids()) == set(pooled.manifest.chunk_ids())


def _points(ws: Workspace) -> dict:
    """Every point's sparse vector (as ``embed_document`` made it) and payload, but its write time
    and project id."""
    import qdrant_edge as qe

    from probe_core.storage.protocol import SPARSE

    pts, _ = ws.store._s().scroll(qe.ScrollRequest(limit=100_000, with_payload=True, with_vector=True))
    out = {}
    for p in pts:
        vec = p.vector[SPARSE]
        payload = ws.store._keys.decode(p.payload, str(p.id))
        payload.pop("indexed_at", None)  # a lean shard stores none (``storage/edge_payload.py``)
        payload.pop("project_id")  # named after the tree's folder: the two trees differ
        out[str(p.id)] = (sorted(zip(vec.indices, vec.values)), payload)
    return out


def test_the_workers_make_the_sparse_vectors_and_a_batch_is_written_at_once(both):
    _, _, pooled, report, writes = both
    assert writes["embed_document"] == 0  # every vector came from a worker process
    assert writes["replace_file"] == 0 and 0 < writes["add_files"] < report.files_indexed / 10  # one per 100 kB batch
    assert writes["upsert"] <= report.chunks_indexed / lexical.UPSERT_POINTS + writes["add_files"]  # not one per file


def test_same_sparse_vectors_and_payloads(both):
    serial, _, pooled, report, _ = both
    a, b = _points(serial), _points(pooled)
    assert len(a) == report.chunks_indexed and all(vec for vec, _ in a.values())
    diff = [(k, a[k], b.get(k)) for k in a if a[k] != b.get(k)]
    assert not diff, f"{len(diff)} points differ, first: {diff[0]}"


def test_same_chunks_and_dense_queue(both):
    serial, _, pooled, *_ = both
    a = _rows(serial.probe_dir / "manifest.sqlite", MANIFEST_SQL)
    b = _rows(pooled.probe_dir / "manifest.sqlite", MANIFEST_SQL)
    for key in MANIFEST_SQL:
        assert a[key] == b[key], key


def test_same_texts_to_embed_and_the_workers_queue_them_as_lines_of_the_file(both):
    """The dense fill embeds the same text for every chunk whichever path indexed it; the workers
    queue no text for a chunk that is its file's lines (``dense_queue.FROM_FILE``): the fill reads
    them again (``dense.texts_to_embed``)."""
    from probe_core.indexing.dense import texts_to_embed

    serial, _, pooled, report, _ = both
    a, b = (texts_to_embed(ws, ws.manifest.pending_dense(100_000)) for ws in (serial, pooled))
    assert len(a) == len(b) == report.chunks_indexed
    assert sorted(a) == sorted(b)
    con = sqlite3.connect(pooled.probe_dir / "manifest.sqlite")
    stored, empty = con.execute("SELECT COUNT(*), SUM(length(text) = 0) FROM pending_dense").fetchone()
    con.close()
    assert empty > 0.9 * stored


def _packed(ws: Workspace) -> dict[str, list]:
    """Uses and imports, packed per file (``intel/packing.py``), read back through the store."""
    from dataclasses import astuple

    from probe_core.intel import graph_store

    store = graph_store(ws)
    paths = [p for p, _, _ in store.files()]
    return {"refs": sorted((astuple(r) for p in paths
                            for r in store.refs_in(p, 1, 10**9, ("call", "ref", "import"))), key=repr),
            "imports": sorted((astuple(i) for p in paths for i in store.imports_of(p)), key=repr)}


def test_same_symbol_graph(both):
    serial, _, pooled, *_ = both
    a = {**_rows(serial.probe_dir / "manifest.sqlite", GRAPH_SQL), **_packed(serial)}
    b = {**_rows(pooled.probe_dir / "manifest.sqlite", GRAPH_SQL), **_packed(pooled)}
    assert len(a["symbols"]) > 500 and len(a["refs"]) > 5000
    for key in a:
        assert a[key] == b[key], key


def test_same_search_results(both):
    serial, _, pooled, *_ = both
    answers = _answers(serial)
    assert all(answers)
    assert answers == _answers(pooled)


def test_an_edit_after_a_pooled_index_is_picked_up(both):
    _, _, pooled, *_ = both
    target = pooled.root / "probe_core" / "sparse.py"
    target.write_text(target.read_text() + "\n\ndef frobnicate_tokens_quickly():\n    return 42\n")
    report = index_workspace(pooled, dense=False)
    assert report.files_indexed == 1
    assert search(pooled, "frobnicate_tokens_quickly").results[0].path == "probe_core/sparse.py"


@pytest.mark.parametrize("value", ["0", "-2", "many", "999"])
def test_a_bad_worker_count_is_a_one_line_error(value):
    with pytest.raises(ConfigError, match="PROBE_INDEX_WORKERS must be an integer from 1 to 256"):
        index_workers({"PROBE_INDEX_WORKERS": value})


def test_the_worker_count_defaults_to_the_usable_cpus():
    assert index_workers({}) >= 1 and index_workers({"PROBE_INDEX_WORKERS": "3"}) == 3


def _site_tree(dest: Path, total: int = 6_000_000) -> Path:
    """Real Python sources from site-packages (paths kept), ``total`` bytes of them: more than the
    pool's threshold (``MIN_POOL_BYTES``), so ``probe index`` reads them with workers."""
    site = Path(sysconfig.get_paths()["purelib"])
    size = 0
    for src in sorted(site.rglob("*.py")):
        if "__pycache__" in src.parts or not src.is_file() or not 2_000 < src.stat().st_size < 60_000:
            continue
        target = dest / src.relative_to(site)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
        size += src.stat().st_size
        if size >= total:
            return dest
    raise AssertionError(f"only {size} bytes of sources in {site}")


def _workers_of(pid: int) -> set[int]:
    """The pool's worker processes among ``pid``'s children."""
    out = set()
    try:
        children = [c for task in Path(f"/proc/{pid}/task").iterdir() for c in (task / "children").read_text().split()]
    except OSError:  # it has just exited
        return out
    for child in children:
        try:
            if b"multiprocessing" in Path(f"/proc/{child}/cmdline").read_bytes():
                out.add(int(child))
        except OSError:
            pass
    return out


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_kill_9_while_workers_chunk_leaves_no_worker_and_the_next_run_is_exact(tmp_path):
    root = _site_tree(tmp_path / "repo")
    db = root / ".probe" / "manifest.sqlite"
    env = {**os.environ, "PROBE_INDEX_WORKERS": "2"}
    proc = subprocess.Popen([*PROBE, "index", "--root", str(root), "--quiet", "--lexical-only"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    workers: set[int] = set()
    deadline = time.monotonic() + 600
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            workers |= _workers_of(proc.pid)
            if workers and db.exists() and _count(db, "SELECT COUNT(*) FROM files") > 20:
                os.kill(proc.pid, signal.SIGKILL)
                break
            time.sleep(0.01)
        else:
            pytest.fail(f"the kill point was never reached: {proc.stderr.read().decode()[-500:]}")
    finally:
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL and workers
    gone_by = time.monotonic() + 30
    while any(_running(w) for w in workers) and time.monotonic() < gone_by:
        time.sleep(0.1)
    assert not any(_running(w) for w in workers), "a worker outlived the killed indexer"
    index_cli(root, "--lexical-only")
    ws = Workspace.open(root)
    try:
        assert_exact(ws)
    finally:
        ws.close()


def test_the_graphs_id_maps_are_let_go_after_the_run(both):
    """A graph built from empty keeps its name and word ids in memory while it is written
    (``GraphStore._ids``); the owner does not hold them after the run."""
    from probe_core.intel.build import graph_store

    serial, _, pooled, _, _ = both
    for ws in (serial, pooled):
        assert graph_store(ws)._known == {}
        assert graph_store(ws).refs_named("index_workspace")
