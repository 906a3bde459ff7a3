"""The fault-injection harness the adversarial tests and ``bench/bench_faults.py`` share: a real tree
of source files in git, ``kill -9`` at chosen moments, snapshots of an index to compare with a clean
index of the same tree, and the hostile tree. Plain functions over subprocesses, importable without
pytest.
"""
from __future__ import annotations

import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import sysconfig
import time
from collections import Counter
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[2]
GIT = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "commit.gpgsign=false"]


def probe_cli(*args: str, root: Path | None = None, env: dict | None = None, timeout: float = 600,
              check: bool = True, prefix: list[str] | None = None) -> subprocess.CompletedProcess:
    """Run ``probe ARGS`` as a real subprocess (``python -m probe_cli``)."""
    cmd = [*(prefix or []), sys.executable, "-m", "probe_cli", *args]
    if root is not None:
        cmd += ["--root", str(root)]
    merged = {**os.environ, **(env or {})}
    proc = subprocess.run(cmd, cwd=REPO_ROOT, env=merged, capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"probe {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc


def index_snapshot(root: Path) -> dict:
    """Everything an index holds that must not depend on how it was built: the store's points (id →
    payload without the timestamp, whether a dense vector is attached) and the manifest's files,
    chunks and branch versions. Two snapshots equal ⇔ same points, tags and manifest."""
    from probe_core import Workspace

    ws = Workspace.open(root, create=False)
    try:
        points = {}
        for pid, payload, has_dense in _all_points(ws):  # noqa: B007
            points[pid] = ({k: v for k, v in payload.items() if k != "indexed_at"}, has_dense)
        db = ws.manifest._db  # read-only queries over the manifest's own connection
        files = sorted(db.execute("SELECT path, size, file_hash, language, chunk_kind, last_error FROM files"))
        chunks = sorted(db.execute(
            "SELECT point_id, p.path, chunk_idx, start_line, end_line, chunk_hash, file_hash, live FROM chunks c"
            " JOIN paths p ON p.id = c.file"))
        branch_files = sorted(db.execute("SELECT branch, path, file_hash FROM branch_files"))
        pending = db.execute("SELECT COUNT(*) FROM pending_dense").fetchone()[0]
        meta = {k: ws.manifest.get_meta(k) for k in ("index_dirty", "embedding_model_id", "embedding_dimensions")}
        return {"points": points, "files": files, "chunks": chunks, "branch_files": branch_files,
                "pending_dense": pending, "meta": meta}
    finally:
        ws.close()


def _all_points(ws):
    """(id, payload, has a dense vector) of every point in the workspace's embedded store."""
    from qdrant_edge import ScrollRequest

    shard, offset = ws.store._s(), None  # the test reads the shard directly: no public "dump" exists
    while True:
        pts, offset = shard.scroll(ScrollRequest(offset=offset, limit=1000, with_payload=True, with_vector=True))
        for p in pts:
            vectors = p.vector if isinstance(p.vector, dict) else {}
            yield str(p.id), ws.store._keys.decode(p.payload, str(p.id)), "dense" in vectors  # the protocol's key names
        if offset is None:
            break


def real_tree(dest: Path, n_files: int, *, max_bytes: int = 1000) -> Path:
    """``n_files`` real Python files and stubs from site-packages (the smallest kind, so a few
    thousand of them stay quick to index), copied with their paths, in a fresh git repository."""
    site = Path(sysconfig.get_paths()["purelib"])
    picked = []
    for path in sorted(site.rglob("*")):
        if path.suffix in (".py", ".pyi") and "__pycache__" not in path.parts and path.is_file() \
                and 0 < path.stat().st_size < max_bytes:
            picked.append(path)
            if len(picked) == n_files:
                break
    assert len(picked) == n_files, f"only {len(picked)} small source files in {site}"
    for src in picked:
        target = dest / src.relative_to(site)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-qm", "tree")
    return dest


def git(root: Path, *args: str) -> None:
    subprocess.run([*GIT, "-C", str(root), *args], check=True, capture_output=True)


def progress(root: Path) -> tuple[int, int, int]:
    """(files, chunks, chunks with a dense vector) in the manifest right now (read-only)."""
    path = root / ".probe" / "manifest.sqlite"
    if not path.exists():
        return 0, 0, 0
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=2)
        try:
            return (db.execute("SELECT COUNT(*) FROM files").fetchone()[0],
                    db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0],
                    db.execute("SELECT COUNT(*) FROM chunks WHERE has_dense=1").fetchone()[0])
        finally:
            db.close()
    except sqlite3.Error:
        return -1, -1, -1  # mid-creation: not yet a database


def clean_snapshot(root: Path, build) -> dict:
    """Index the same tree again from nothing, under the same workspace id, with ``build()``; the
    index under test is put back afterwards."""
    probe, aside = root / ".probe", root.parent / f"{root.name}-index-under-test"
    shutil.move(probe, aside)
    try:
        probe.mkdir()
        shutil.copy(aside / "config.json", probe / "config.json")
        build()
        return index_snapshot(root)
    finally:
        shutil.rmtree(probe, ignore_errors=True)
        shutil.move(aside, probe)


def assert_same_index(got: dict, want: dict) -> int:
    """Points (ids, payloads with branch tags), manifest files, chunks and branch versions equal;
    returns how many points were compared."""
    got_points = {pid: payload for pid, (payload, _dense) in got["points"].items()}
    want_points = {pid: payload for pid, (payload, _dense) in want["points"].items()}
    missing, extra = want_points.keys() - got_points.keys(), got_points.keys() - want_points.keys()
    assert not missing and not extra, f"{len(missing)} points missing, {len(extra)} extra"
    differ = [pid for pid in want_points if got_points[pid] != want_points[pid]]
    assert not differ, f"{len(differ)} payloads differ, e.g. {got_points[differ[0]]} != {want_points[differ[0]]}"
    for table in ("files", "chunks", "branch_files"):
        assert got[table] == want[table], f"manifest {table} differ"
    assert got["meta"]["index_dirty"] == "0"
    return len(want_points)


def assert_dense_consistent(root: Path, snap: dict, sample: int = 48) -> int:
    """Every point with a dense vector is one the manifest marks embedded, the rest are queued, and a
    sample of the stored vectors equals a fresh embedding of its chunk's text (nothing misplaced)."""
    from probe_core import Workspace
    from probe_core.chunking import chunk_file
    from probe_core.indexing.indexer import index_text
    from probe_core.storage.manifest_codec import pid_text
    from probe_core.scan import read_text

    ws = Workspace.open(root, create=False)
    try:
        db = ws.manifest._db
        marked = {pid_text(r[0]) for r in db.execute("SELECT point_id FROM chunks WHERE has_dense=1")}
        queued = {pid_text(r[0]) for r in db.execute("SELECT point_id FROM pending_dense")}
        stored = {pid for pid, (_payload, dense) in snap["points"].items() if dense}
        assert stored == marked, f"{len(stored ^ marked)} points disagree on having a dense vector"
        assert queued == set(snap["points"]) - marked, "the dense queue is not exactly the chunks without vectors"
        picked = random.Random(7).sample(sorted(marked), min(sample, len(marked)))
        vectors = ws.store.dense_vectors(picked)
        for pid in picked:
            payload = snap["points"][pid][0]
            text = read_text(root, payload["file_path"])
            (chunk,) = [c for c in chunk_file(payload["file_path"], text)
                        if (c.start_line, c.end_line) == (payload["start_line"], payload["end_line"])]
            fresh = ws.embedder.embed_documents([index_text(chunk)])[0]
            cosine = float(np.dot(fresh, vectors[pid]) / (np.linalg.norm(fresh) * np.linalg.norm(vectors[pid])))
            assert cosine > 0.999, f"{pid} ({payload['file_path']}) holds another chunk's vector ({cosine:.3f})"
        return len(picked)
    finally:
        ws.close()


def spawn(kind: str, root: Path) -> subprocess.Popen:
    """``probe index``, or a ``probe mcp`` owner (it indexes from the start; its stdin stays open)."""
    if kind == "mcp":
        return subprocess.Popen([sys.executable, "-m", "probe_cli", "mcp", "--root", str(root)], cwd=REPO_ROOT,
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return subprocess.Popen([sys.executable, "-m", "probe_cli", "index", "--root", str(root)], cwd=REPO_ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def kill_when(proc: subprocess.Popen, root: Path, start: tuple[int, int, int], target: tuple[str, int],
              timeout: float = 120) -> None:
    """SIGKILL ``proc`` at a moment chosen by ``target``: ``("time", n)`` n hundredths of a second after
    its start, ``("files", n)`` once n more files are in the manifest (the lexical phase commits file
    by file), ``("work", n)`` once n more files or dense vectors are (every run of the progression
    advances one or the other), or when it has finished by itself."""
    what, n = target
    t0 = time.monotonic()
    while proc.poll() is None and time.monotonic() - t0 < timeout:
        if what == "time" and time.monotonic() - t0 >= n / 100:
            break
        files, _chunks, dense = progress(root)
        if what == "files" and files - start[0] >= n:
            break
        if what == "work" and files >= 0 and (files - start[0]) + (dense - start[2]) >= n:
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def tree_files(root: Path) -> int:
    """How many files the index of ``root`` will hold (a :func:`real_tree`: every tracked file)."""
    out = subprocess.run([*GIT, "-C", str(root), "ls-files", "-z"], check=True, capture_output=True)
    return out.stdout.count(b"\0")


def kill_target(rng: random.Random, files_left: int, lexical_left: int) -> tuple[str, int] | None:
    """A target inside the lexical phase, placed by its progress (how many files are still to be
    committed), or None when no lexical kill is owed or too few files are left to place one. Each
    kill takes at most a ``lexical_left + 2``-th of what is left, so the phase outlasts the kills
    owed to it however fast the machine indexes."""
    if lexical_left <= 0:
        return None
    share = files_left // (lexical_left + 2)
    return ("files", rng.randint(1, share)) if share >= 8 else None


def kill_sweep(root: Path, kills: int, seed: int = 1313, lexical_kills: int | None = None) -> Counter:
    """``kills`` runs of ``probe index`` (two in three) or of a ``probe mcp`` owner, each killed with
    SIGKILL at a random moment. The first ``lexical_kills`` (default a quarter, at least 3) are placed
    by the lexical phase's progress, a few files into what is left of it, never by time: a fast or
    quiet machine would be past that short phase before a timed kill. The rest: a quarter by time
    (0.5-4 s after start), the others once 1-160 more files or dense vectors are in. Each run
    resumes the last, so together they are one indexing. Returns how many kills landed in each
    process and phase (startup, lexical, dense)."""
    rng = random.Random(seed)
    total = tree_files(root)
    lexical_left = max(3, kills // 4) if lexical_kills is None else lexical_kills
    phases: Counter = Counter()
    for i in range(kills):
        kind = "mcp" if i % 3 == 2 else "index"
        before = progress(root)
        target = kill_target(rng, total - max(before[0], 0), lexical_left)
        if target is None:
            target = ("time", rng.randint(50, 400)) if i % 4 == 0 else ("work", rng.randint(1, 160))
        proc = spawn(kind, root)
        kill_when(proc, root, before, target)
        if proc.stdin:
            proc.stdin.close()
        after = progress(root)
        phase = "dense" if after[2] > before[2] else "lexical" if after[:2] != before[:2] else "startup"
        phases[f"{kind}:{phase}"] += 1
        lexical_left -= target[0] == "files" and phase == "lexical"
    return phases


def build_hostile_tree(root: Path, tiny_files: int = 20000, depth: int = 500) -> dict[str, str]:
    """The hostile tree of the adversarial suite: ``tiny_files`` one-line files, a 50 MB file, a 5 MB
    and a 1 MB single-line file, binaries with source extensions, non-UTF-8 names, a FIFO and a leaf
    ``depth`` directories down. Returns {path: the reason the scanner must skip it for}."""
    for i in range(tiny_files):
        d = root / "many" / f"d{i // 100:03d}"
        if i % 100 == 0:
            d.mkdir(parents=True)
        (d / f"f{i % 100:02d}.py").write_text(f"VALUE_{i} = {i}\n")
    expected = {}
    (root / "data").mkdir()
    with open(root / "data" / "huge.txt", "wb") as fh:  # 50 MB of text lines
        line = b"the quick brown fox jumps over the lazy dog " * 2 + b"\n"
        fh.write(line * (50 * 2**20 // len(line) + 1))
    expected["data/huge.txt"] = "too_large"
    (root / "oneline").mkdir()
    (root / "oneline" / "bundle.py").write_bytes(b"x=1;" * (5 * 2**20 // 4))  # 5 MB, no newline
    expected["oneline/bundle.py"] = "too_large"
    # just under the 1 MB cap, one line of a million characters: indexed (the worst case for memory:
    # the symbol graph holds a reference per statement)
    (root / "oneline" / "edge.py").write_bytes(b"x=1;" * (999_000 // 4))
    (root / "bin").mkdir()
    (root / "bin" / "image.py").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + os.urandom(4096))
    (root / "bin" / "program.c").write_bytes(b"\x7fELF\x02\x01\x01\0" + bytes(range(256)) * 16)
    (root / "bin" / "utf16.ts").write_bytes("export const x = 1;\n".encode("utf-16"))
    expected.update({"bin/image.py": "binary", "bin/program.c": "binary", "bin/utf16.ts": "binary"})
    (root / "bin" / "latin1.py").write_bytes(b"name = 'caf\xe9'\n")  # not UTF-8 inside: indexed, decoded
    names = os.fsencode(root / "names")
    os.mkdir(names)
    with open(os.path.join(names, b"caf\xe9.py"), "w") as fh:
        fh.write("A = 1\n")
    os.mkdir(os.path.join(names, b"\xff\xfe"))
    with open(os.path.join(names, b"\xff\xfe", b"inner.py"), "w") as fh:
        fh.write("B = 2\n")
    expected["names/caf\ufffd.py"] = expected["names/\ufffd\ufffd"] = "undecodable_name"
    os.mkfifo(root / "pipe.py")
    expected["pipe.py"] = "not_regular_file"
    deep = root.joinpath("deep", *["d"] * depth)
    deep.mkdir(parents=True)
    (deep / "leaf.py").write_text("def bottom_of_the_abyss():\n    return 'deep'\n")
    return expected
