"""kill -9 in the middle of `probe index`, then `probe index` again: exactly the right points."""
from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from probe_core import Workspace
from probe_core.intel import postings

from .test_indexer import assert_exact

PROBE = [sys.executable, "-m", "probe_cli"]


def make_repo(root: Path, n_files: int) -> Path:
    for i in range(n_files):
        p = root / f"pkg{i % 10}" / f"mod_{i}.py"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(
            f'"""Module {i}."""\nimport os\n\nLIMIT_{i} = {i}\n\n\n'
            f"def compute_{i}(value):\n    return value * {i} + LIMIT_{i}\n\n\n"
            f"class Worker{i}:\n    def run(self, job):\n        return compute_{i}(job) + os.getpid()\n"
        )
    return root


def _count(db: Path, sql: str) -> int:
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.2)
        try:
            return con.execute(sql).fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def run_and_kill(root: Path, args: list[str], ready, timeout: float = 120) -> None:
    """Start `probe index`, SIGKILL it as soon as ``ready(manifest_path)`` holds."""
    db = root / ".probe" / "manifest.sqlite"
    proc = subprocess.Popen([*PROBE, "index", "--root", str(root), "--quiet", *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"indexer finished before the kill point: {proc.stderr.read().decode()[-500:]}")
            if db.exists() and ready(db):
                os.kill(proc.pid, signal.SIGKILL)
                break
            time.sleep(0.005)
        else:
            pytest.fail("kill point never reached")
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL


def index_cli(root: Path, *args: str) -> None:
    out = subprocess.run([*PROBE, "index", "--root", str(root), "--quiet", *args], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_kill_during_lexical_phase(tmp_path):
    # a new index commits its files a lexical batch (1000 files) at a time: three batches, killed
    # after the first, while the next one's points are being written
    root = make_repo(tmp_path / "repo", 2500)
    run_and_kill(root, ["--lexical-only"],
                 lambda db: 20 < _count(db, "SELECT COUNT(*) FROM files") < 2400)
    # an edit and a deletion made while the indexer was down must be picked up too
    (root / "pkg0/mod_0.py").write_text("def replaced():\n    return 1\n")
    (root / "pkg1/mod_1.py").unlink()
    index_cli(root, "--lexical-only")
    ws = Workspace.open(root)
    try:
        assert_exact(ws)
        assert len(ws.manifest.file_paths()) == 2499
        assert ws.manifest.get_meta("index_dirty") == "0"
    finally:
        ws.close()


def test_kill_during_dense_phase_resumes(tmp_path):
    root = make_repo(tmp_path / "repo", 40)
    run_and_kill(root, [], lambda db: _count(db, "SELECT COUNT(*) FROM chunks WHERE has_dense=1") >= 32)
    ws = Workspace.open(root)
    try:
        done_before = ws.manifest.counts()["chunks_dense"]
        total = ws.manifest.counts()["chunks"]
        assert 0 < done_before < total
    finally:
        ws.close()
    index_cli(root)
    ws = Workspace.open(root)
    try:
        assert_exact(ws)
        counts = ws.manifest.counts()
        assert counts["chunks_dense"] == counts["chunks"] == total
        assert ws.store.count(with_dense=True) == total
        assert ws.manifest.pending_dense(10) == []
    finally:
        ws.close()


def test_kill_during_a_branch_switch(tmp_path):
    """kill -9 while a checkout is being indexed (old versions being kept and retagged), then
    `probe index`: the checked-out versions are exactly the tree's, the other branch's versions
    are all kept, tags are right, and switching back revives them."""
    from .test_branches import git, tags

    root = make_repo(tmp_path / "repo", 400)
    (root / ".gitignore").write_text(".probe/\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "main")
    index_cli(root, "--lexical-only")
    git(root, "checkout", "-qb", "feature")
    changed = [f"pkg{i % 10}/mod_{i}.py" for i in range(300)]
    for rel in changed:
        p = root / rel
        p.write_text(p.read_text().replace("return value *", "return value // 2 *"))
    git(root, "commit", "-qam", "feature")

    run_and_kill(root, ["--lexical-only"],
                 lambda db: 20 < _count(db, "SELECT COUNT(DISTINCT file) FROM chunks WHERE live=0") < 250)
    index_cli(root, "--lexical-only")

    ws = Workspace.open(root)
    try:
        from .test_indexer import expected_ids

        assert set(ws.store.all_ids()) == set(ws.manifest.chunk_ids())
        assert set(ws.manifest.chunk_ids(live=True)) == expected_ids(ws)
        kept_paths = set(ws.manifest.chunk_ids(live=False).values())
        assert kept_paths == set(changed)  # main's version of every changed file, no more
        t = tags(ws)
        live_versions = {(p, r.file_hash) for p, r in ws.manifest.files().items()}
        for (path, _version), branches in t.items():
            if (path, _version) not in live_versions:
                assert branches == ["main"], path
            elif path in changed:
                assert branches == ["feature"], path
            else:
                assert branches == ["feature", "main"], path
        assert ws.manifest.get_meta("index_dirty") == "0"
    finally:
        ws.close()

    git(root, "checkout", "-q", "main")
    index_cli(root, "--lexical-only")
    ws = Workspace.open(root)
    try:
        assert set(ws.manifest.chunk_ids(live=True)) == expected_ids(ws)
        assert set(ws.store.all_ids()) == set(ws.manifest.chunk_ids())
        assert set(ws.manifest.chunk_ids(live=False).values()) == set(changed)  # now feature's versions
    finally:
        ws.close()


GRAPH_BY_NAME = {  # the graph's rows with ids resolved: ids depend on the order files were written in
    "files": "SELECT path, file_hash, lines FROM graph_files",
    "symbols": "SELECT f.path, s.name, s.qualname, s.kind, s.line, s.end_line FROM graph_symbols s JOIN graph_files f ON f.id = s.file",
    "refs": "SELECT n.name, f.path, r.kind FROM graph_refs r JOIN graph_names n ON n.id = r.name"
            " JOIN graph_files f ON f.id = r.file",
    "postings": "SELECT t.term, f.path FROM graph_postings p JOIN graph_terms t ON t.id = p.term"
                " JOIN json_each(posting_files(p.files)) j JOIN graph_files f ON f.id = j.value",
}


def _graph(root: Path) -> dict[str, list]:
    con = sqlite3.connect(root / ".probe" / "manifest.sqlite")
    postings.readable(con)
    try:
        return {k: sorted(con.execute(q).fetchall()) for k, q in GRAPH_BY_NAME.items()}
    finally:
        con.close()


def test_kill_while_a_new_graph_is_written_in_bulk(tmp_path):
    """A new index's graph keeps its name and word ids in memory and commits 1000 files at a time
    (``intel/store.py``): killed after the first commit, the next run graphs the rest through
    SQLite's ids, and the graph holds what a clean build's does."""
    root = make_repo(tmp_path / "repo", 2500)
    run_and_kill(root, ["--lexical-only"], lambda db: 0 < _count(db, "SELECT COUNT(*) FROM graph_files") < 2000)
    (root / "pkg2/mod_2.py").write_text("def replaced():\n    return compute_3(1)\n")
    index_cli(root, "--lexical-only")
    clean = tmp_path / "clean"
    shutil.copytree(root, clean, ignore=shutil.ignore_patterns(".probe"))
    index_cli(clean, "--lexical-only")
    graph = _graph(root)
    assert graph == _graph(clean)
    assert len(graph["files"]) == 2500
    assert ("compute_3", "pkg2/mod_2.py", 1) in graph["refs"]  # a call (bit 1) made by the edit
