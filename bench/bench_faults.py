"""Faults at a larger scale than the test suite affords: many kill -9 over a bigger real tree, with
the dense phase run to the end, and peak memory on a hostile tree.

  uv run python bench/bench_faults.py kills [--files 3700] [--kills 60] [--dense]
  uv run python bench/bench_faults.py hostile [--tiny 20000] [--dense]
  uv run python bench/bench_faults.py watch [--dirs 5000] [--watch-limit 8192]
  uv run python bench/bench_faults.py walk [--files 5000] [--repeat 15]

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
afterwards is reported, until a later write there is reported, and the same for a directory
deleted and made again (a generator's output); the inotify watches held and the most held at once
in each phase (sampled every 3 ms). The watcher's debounce is 0.3 s here. ``--watch-limit``: the
same in a user namespace whose inotify watch limit is that number (needs ``unshare --user``).

``walk``: the root-confined walk and the whole scan over ``--files`` files, median of ``--repeat``.
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


def inotify_watches() -> int:
    """The inotify watches this process holds now: the sum of a snapshot of every inotify
    descriptor's ``wd`` lines that reads the same twice in a row.

    One pass over ``/proc/self/fd`` is not a snapshot: a watch replaced meanwhile (the old
    descriptor read before it closed, the new one, at a number listed earlier, after it filled)
    is counted twice, which once showed 1,308 watches under a kernel limit of 1,000. Two equal
    passes mean every descriptor was open with those watches at once."""
    last = _watches_by_fd()
    while True:
        now = _watches_by_fd()
        if now == last:
            return sum(now.values())
        last = now


def _watches_by_fd() -> dict[str, int]:
    """Each inotify descriptor's watch count (``wd`` lines in its fdinfo), read one by one."""
    counts = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != "anon_inode:inotify":
                continue
            with open(f"/proc/self/fdinfo/{fd}") as info:
                counts[fd] = sum(1 for line in info if line.startswith("inotify wd:"))
        except OSError:
            continue  # closed meanwhile
    return counts


class WatchPeak:
    """The most inotify watches held at once, sampled every few milliseconds from a thread."""

    def __init__(self) -> None:
        import threading

        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(0.003):
            self.peak = max(self.peak, inotify_watches())

    def reset(self) -> int:
        peak, self.peak = self.peak, inotify_watches()
        return max(peak, self.peak)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()


def bench_watch(args, work: Path) -> dict:
    """See the module docstring; with ``--watch-limit`` it runs itself again in a user namespace
    whose inotify watch limit is that number (``/proc/sys/user/max_inotify_watches``)."""
    if args.watch_limit and not args.in_namespace:
        script = (f"echo {args.watch_limit} > /proc/sys/user/max_inotify_watches && exec \"$@\"")
        cmd = ["unshare", "--user", "--map-root-user", "sh", "-c", script, "sh", sys.executable, __file__, "watch",
               "--dirs", str(args.dirs), "--watch-limit", str(args.watch_limit), "--in-namespace"]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        if out.returncode != 0:
            raise SystemExit(out.stderr[-3000:])
        return json.loads(out.stdout.strip().splitlines()[-1])
    import queue

    from probe_core.indexing.watcher import RepoWatcher, WatchSettings

    root = work / "tree"
    for i in range(args.dirs):
        d = root / f"a{i // 100}" / f"b{i}"
        d.mkdir(parents=True)
        (d / "x.py").write_text("X = 1\n")
    batches: queue.Queue = queue.Queue()
    watcher = RepoWatcher(root, batches.put, WatchSettings(debounce_s=0.3, max_wait_s=5, stable_s=0, rescan_s=3600))

    def reported(rel: str, timeout: float = 20.0) -> float | None:
        t0, seen = time.perf_counter(), set()
        while rel not in seen:
            left = timeout - (time.perf_counter() - t0)
            try:
                seen |= batches.get(timeout=max(left, 0.01)).paths
            except queue.Empty:
                return None  # never reported
        return round(time.perf_counter() - t0, 2)

    peak = WatchPeak()
    t0 = time.perf_counter()
    watcher.start()
    result: dict = {"bench": "watch", "dirs": args.dirs, "watch_limit": args.watch_limit}
    try:
        deadline = time.monotonic() + 120
        while len(watcher.watched_dirs) < args.dirs and watcher.running and time.monotonic() < deadline:
            time.sleep(0.01)
        result["setup_s"] = round(time.perf_counter() - t0, 2)
        time.sleep(0.5)
        result["watches_held"] = inotify_watches()
        result["peak_watches_setup"] = peak.reset()
        (root / "new" / "deep").mkdir(parents=True)
        (root / "new" / "deep" / "f.py").write_text("Y = 2\n")
        result["new_dir_file_reported_s"] = reported("new/deep/f.py")
        (root / "new" / "deep" / "g.py").write_text("Z = 3\n")
        result["later_write_reported_s"] = reported("new/deep/g.py")
        time.sleep(0.5)
        result["peak_watches_new_dir"] = peak.reset()
        # a generator's output directory: deleted and made again, then written to later
        shutil.rmtree(root / "a0" / "b1")
        (root / "a0" / "b1").mkdir()
        (root / "a0" / "b1" / "y.py").write_text("Y = 3\n")
        result["recreated_dir_file_reported_s"] = reported("a0/b1/y.py")
        time.sleep(0.5)
        (root / "a0" / "b1" / "z.py").write_text("Z = 4\n")
        result["recreated_dir_later_write_reported_s"] = reported("a0/b1/z.py")
        result["peak_watches_recreate"] = peak.reset()
        status = watcher.status()
    finally:
        watcher.stop()
        peak.close()
    result.update({"dirs_watched": len(watcher.watched_dirs), "restarts": status["watcher_restarts"],
                   "running": status["watcher_running"], "mode": status.get("watcher_mode", "inotify"),
                   "error": status["watcher_error"], "machine": machine()})
    return result


def bench_walk(args, work: Path) -> dict:
    """How long the root-confined walk and the whole scan take over a tree of ``--files`` files in
    directories of 10 (median of ``--repeat`` runs, page cache warm)."""
    import statistics

    from probe_core.scan import IgnoreRules, entered_dirs, scan_files

    root = work / "tree"
    for i in range(args.files):
        d = root / f"p{i // 1000}" / f"q{i // 100}" / f"r{i // 10}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"m{i}.py").write_text(f"X{i} = {i}\n")
    rules = IgnoreRules(root)
    walks, scans = [], []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        dirs = entered_dirs(rules)
        walks.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        scanned = scan_files(root, rules=rules)
        scans.append(time.perf_counter() - t0)
    return {"bench": "walk", "files": len(scanned.files), "dirs": len(dirs),
            "walk_ms_median": round(statistics.median(walks) * 1000, 1),
            "scan_ms_median": round(statistics.median(scans) * 1000, 1), "repeat": args.repeat, "machine": machine()}


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
    w.add_argument("--watch-limit", type=int, default=0,
                   help="run in a user namespace whose inotify watch limit is this (e.g. 8192)")
    w.add_argument("--in-namespace", action="store_true", help=argparse.SUPPRESS)
    wk = sub.add_parser("walk")
    wk.add_argument("--files", type=int, default=5000)
    wk.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="probe-bench-faults-"))
    os.environ.setdefault("PROBE_DATA_DIR", str(work / "probe-data"))
    try:
        bench = {"kills": bench_kills, "hostile": bench_hostile, "watch": bench_watch, "walk": bench_walk}[args.what]
        result = bench(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
