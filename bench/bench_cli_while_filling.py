"""Warm `probe search --json` while the background owner fills dense vectors: two Probe installs
interleaved on copies of one lexically indexed tree, and the same tree fully embedded (the idle floor).

  python bench/bench_cli_while_filling.py --lexical /tmp/x/base --dense /tmp/x/base-dense \
      --arm main=/work/main/.venv/bin/probe --arm branch=.venv/bin/probe [--pairs 3]

``--lexical``: a folder whose tree was indexed with ``probe index --lexical-only`` (the dense queue
full); ``--dense``: the same tree after ``probe index`` (no fill left: the "idle" arm, run with the
first ``--arm``). An arm is ``NAME=PROBE[:PYTHONPATH]`` (the path: a frozen copy of a tree's code,
so edits meanwhile do not leak in). Per trial: a fresh copy, ``probe index --background`` (the daemon starts
filling), then ``--n`` searches back to back ("burst": the gap is the next process's start) and
``--n`` searches ``--gap`` s apart ("spaced": each one alone, as an agent's calls between its
turns), and the fill's rate over each window from ``probe status``. Arms run in turn, the order
reversed every pair; every arm's bytecode is cached under its own ``PYTHONPYCACHEPREFIX``.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

QUERIES = ["parse a cookie header", "url routing rules", "how are redirects built", "multipart form parsing",
           "debugger console", "password hashing", "request body stream limit", "etag and cache headers",
           "websocket", "serve static files", "test client cookies", "proxy fix headers", "dispatch to app",
           "http date formatting", "range requests", "user agent parsing", "secure filename",
           "reloader watching files", "local proxies and context", "middleware for shared data"]


def percentile(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


class Arm:
    def __init__(self, spec: str, work: Path):
        name, _, rest = spec.partition("=")
        self.name = name
        self.probe, _, path = rest.partition(":")
        drop = ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")  # the arm's bytecode cache must be written
        self.env = {k: v for k, v in os.environ.items() if k not in drop}
        self.env.update(PROBE_DATA_DIR=str(work / "data"), PYTHONPYCACHEPREFIX=str(work / f"pyc-{name}"))
        if path:
            self.env["PYTHONPATH"] = path

    def run(self, *args: str) -> str:
        return subprocess.run([self.probe, *args], capture_output=True, text=True, env=self.env).stdout

    def embedded(self, root: Path) -> int:
        return json.loads(self.run("status", "--json", "--root", str(root)))["progress"]["chunks_embedded"]


def window(arm: Arm, root: Path, n: int, gap: float, tag: str) -> dict:
    """``n`` searches ``gap`` s apart: wall and engine ms, and the fill's rate meanwhile."""
    c0, t0 = arm.embedded(root), time.perf_counter()
    walls, tooks = [], []
    for i in range(n):
        t = time.perf_counter()
        out = arm.run("search", f"{QUERIES[i % len(QUERIES)]} {tag}", "--json", "--root", str(root))
        walls.append((time.perf_counter() - t) * 1e3)
        tooks.append(json.loads(out)["took_ms"])
        time.sleep(gap)
    rate = (arm.embedded(root) - c0) / (time.perf_counter() - t0)
    return {"p50": statistics.median(walls), "p95": percentile(walls, 95), "took_p50": statistics.median(tooks),
            "fill_per_s": rate}


def trial(arm: Arm, source: Path, work: Path, n: int, gap: float, filling: bool) -> dict:
    copy = work / f"copy-{arm.name}"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(source, copy, symlinks=True)
    root = next(p for p in copy.iterdir() if (p / ".probe").is_dir()) if not (copy / ".probe").is_dir() else copy
    subprocess.run([arm.probe, "index", "--background", "--root", str(root)], capture_output=True, env=arm.env, check=True)
    try:
        deadline = time.time() + 180
        while filling and arm.embedded(root) < 64 and time.time() < deadline:  # the model loaded, the fill going
            time.sleep(1)
        out = {"load": os.getloadavg()[0]}
        out["burst"] = window(arm, root, n, 0.0, "burst")
        out["spaced"] = window(arm, root, n, gap, "spaced")
        out["load_end"] = os.getloadavg()[0]
        return out
    finally:
        arm.run("stop", "--root", str(root))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lexical", type=Path, required=True)
    ap.add_argument("--dense", type=Path, help="the same tree fully embedded: the idle arm")
    ap.add_argument("--arm", action="append", required=True, help="NAME=PROBE[:PYTHONPATH]")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--n", type=int, default=10)
    ap.add_argument("--gap", type=float, default=1.5)
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "probe-bench-cli-fill")
    args = ap.parse_args()
    arms = [Arm(spec, args.work) for spec in args.arm]
    plan = [(a, args.lexical, True) for a in arms]
    if args.dense:
        idle = Arm(args.arm[0].replace(arms[0].name + "=", "idle=", 1), args.work)
        plan.append((idle, args.dense, False))
    for pair in range(args.pairs):
        for arm, source, filling in (plan if pair % 2 == 0 else plan[::-1]):
            r = trial(arm, source, args.work, args.n, args.gap, filling)
            fmt = lambda w: (f"p50 {w['p50']:.0f} p95 {w['p95']:.0f} took {w['took_p50']:.0f} "  # noqa: E731
                             f"fill {w['fill_per_s']:.1f}/s")
            print(f"{time.strftime('%H:%M:%S')} {arm.name:8s} load {r['load']:.1f}-{r['load_end']:.1f} | "
                  f"burst {fmt(r['burst'])} | spaced {fmt(r['spaced'])}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
