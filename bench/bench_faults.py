"""Faults at a larger scale than the test suite affords: many kill -9 over a bigger real tree, with
the dense phase run to the end, and peak memory on a hostile tree.

  uv run python bench/bench_faults.py kills [--files 3700] [--kills 60] [--dense]
  uv run python bench/bench_faults.py hostile [--tiny 20000] [--dense]
  uv run python bench/bench_faults.py watch [--dirs 5000]

``kills``: the small source files of this project's site-packages (paths kept) in git; ``--kills``
runs of ``probe index`` / a ``probe mcp`` owner, each SIGKILLed at a random moment (one indexing
progression: each run resumes the last); then ``probe index`` to the end (``--dense``: with every
dense vector, else lexical) and a comparison with a clean index of the same tree: points (ids and
payloads with branch tags), manifest files, chunks and branch versions, plus the dense bookkeeping
and a sample of vectors against fresh embeddings. Prints one JSON line.

``hostile``: the tree of tests/adversarial/test_hostile_trees.py; peak RSS of ``probe index``
(``--lexical-only`` unless ``--dense``), wall time, files indexed and skipped by reason.

``watch``: what watching each directory on its own costs (the root-confinement fix): a tree of
``--dirs`` directories; seconds until the watch is set up, until a file in a directory created
afterwards is reported (a new watch is swapped in), and until a later write there is reported
(the watcher's debounce is 0.3 s here).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "adversarial"))

import fault_harness as fh  # noqa: E402 - the harness the adversarial tests use

_PEAK_RSS = ("import resource, subprocess, sys; rc = subprocess.run(sys.argv[1:]).returncode; "
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024, rc)")


def machine() -> dict:
    return {"cpus": os.cpu_count(), "load_1m": round(os.getloadavg()[0], 2), "python": platform.python_version()}


def bench_kills(args, work: Path) -> dict:
    root = fh.real_tree(work / "repo", args.files)
    t0 = time.perf_counter()
    phases = fh.kill_sweep(root, args.kills, seed=args.seed)
    sweep_s = time.perf_counter() - t0
    final = ["index"] if args.dense else ["index", "--lexical-only"]
    t0 = time.perf_counter()
    fh.probe_cli(*final, root=root, timeout=7200)
    finish_s = time.perf_counter() - t0
    survivor = fh.index_snapshot(root)
    vectors_checked = fh.assert_dense_consistent(root, survivor, sample=200)
    clean = fh.clean_snapshot(root, lambda: fh.probe_cli("index", "--lexical-only", root=root, timeout=3600))
    compared = fh.assert_same_index(survivor, clean)
    dense = sum(1 for _payload, has in survivor["points"].values() if has)
    return {"bench": "kills", "files": args.files, "kills": args.kills, "phases": dict(sorted(phases.items())),
            "points_equal": f"{compared}/{len(clean['points'])}", "dense_vectors": dense,
            "vectors_checked": vectors_checked, "data_lost": 0, "sweep_s": round(sweep_s, 1),
            "finish_s": round(finish_s, 1), "machine": machine()}


def bench_hostile(args, work: Path) -> dict:
    root = work / "hostile"
    root.mkdir()
    fh.build_hostile_tree(root, args.tiny)
    cmd = [sys.executable, "-m", "probe_cli", "index", "--root", str(root)] + ([] if args.dense else ["--lexical-only"])
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", _PEAK_RSS, *cmd], cwd=ROOT, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    peak_mb, rc = map(int, out.stdout.strip().splitlines()[-1].split())
    st = json.loads(fh.probe_cli("status", "--json", root=root).stdout)
    return {"bench": "hostile", "tiny_files": args.tiny, "dense": args.dense, "exit": rc, "peak_rss_mb": peak_mb,
            "wall_s": round(wall, 1), "files_indexed": st["files_indexed"], "chunks": st["chunks_indexed"],
            "skipped": st["skipped"]["by_reason"], "machine": machine()}


def bench_watch(args, work: Path) -> dict:
    import queue

    from probe_core.indexing.watcher import RepoWatcher, WatchSettings

    root = work / "tree"
    for i in range(args.dirs):
        d = root / f"a{i // 100}" / f"b{i}"
        d.mkdir(parents=True)
        (d / "x.py").write_text("X = 1\n")
    batches: queue.Queue = queue.Queue()
    watcher = RepoWatcher(root, batches.put, WatchSettings(debounce_s=0.3, max_wait_s=5, stable_s=0, rescan_s=3600))

    def reported(rel: str) -> float:
        t0, seen = time.perf_counter(), set()
        while rel not in seen:
            seen |= batches.get(timeout=60).paths
        return round(time.perf_counter() - t0, 2)

    t0 = time.perf_counter()
    watcher.start()
    try:
        while len(watcher._dirs) < args.dirs:  # noqa: SLF001 - the bench reads the watcher's own count
            time.sleep(0.01)
        setup = round(time.perf_counter() - t0, 2)
        time.sleep(0.5)
        (root / "new" / "deep").mkdir(parents=True)
        (root / "new" / "deep" / "f.py").write_text("Y = 2\n")
        new_dir = reported("new/deep/f.py")
        (root / "new" / "deep" / "g.py").write_text("Z = 3\n")
        later = reported("new/deep/g.py")
        status = watcher.status()
    finally:
        watcher.stop()
    return {"bench": "watch", "dirs_watched": len(watcher._dirs), "setup_s": setup,  # noqa: SLF001
            "new_dir_file_reported_s": new_dir, "later_write_reported_s": later,
            "restarts": status["watcher_restarts"], "machine": machine()}


def main() -> int:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="what", required=True)
    k = sub.add_parser("kills")
    k.add_argument("--files", type=int, default=3700)
    k.add_argument("--kills", type=int, default=60)
    k.add_argument("--seed", type=int, default=1313)
    k.add_argument("--dense", action="store_true", help="finish with every dense vector (slow on 2 cores)")
    h = sub.add_parser("hostile")
    h.add_argument("--tiny", type=int, default=20000)
    h.add_argument("--dense", action="store_true")
    w = sub.add_parser("watch")
    w.add_argument("--dirs", type=int, default=5000)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="probe-bench-faults-"))
    os.environ.setdefault("PROBE_DATA_DIR", str(work / "probe-data"))
    try:
        bench = {"kills": bench_kills, "hostile": bench_hostile, "watch": bench_watch}[args.what]
        result = bench(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
