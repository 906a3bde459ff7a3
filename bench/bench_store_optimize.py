"""What a search does while the owner optimizes its Qdrant Edge shard (``storage/edge_optimize.py``).

  uv run python bench/bench_store_optimize.py --indexed /tmp/mono-copy [--gap 0.3] [--json out.json]

On an indexed copy (``bench_scale.py``'s trees, indexed once with ``probe index --lexical-only``;
the copy's shard is optimized in place, so never pass the pristine tree): ``bench_scale.py``'s 40
queries idle, then the same queries every ``--gap`` seconds while ``optimize_aside`` runs in a
thread (a child process optimizes a copy; the owner swaps it in), then once more after it. Reports
the latencies before, during and after, the swap's length and the searches that overlapped it,
the child's CPU seconds, and which answers changed (paths, lines, scores).
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import threading
import time
from pathlib import Path
from report import emit, percentile  # noqa: E402  (bench/ is on sys.path when run as a script)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--indexed", type=Path, required=True)
    ap.add_argument("--gap", type=float, default=0.3)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    from bench_scale import QUERIES
    from probe_core import Workspace, search
    from probe_core.retrieval import search as search_mod
    from probe_core.storage.edge_optimize import optimize_aside

    ws = Workspace.open(args.indexed)

    def ask(q: str) -> tuple[float, float, list]:
        search_mod._cache.__init__(512)  # distinct answers, no cache hits
        t, c = time.perf_counter(), time.process_time()
        res = search(ws, q, top_k=10)
        return ((time.perf_counter() - t) * 1000, (time.process_time() - c) * 1000,
                [(r.path, r.start_line, r.end_line, round(r.score, 9)) for r in res.results])

    for q in ("warm up the caches", "warm_up the_caches"):
        search(ws, q)
    load_start = os.getloadavg()[0]
    idle = [ask(q) for q in QUERIES]
    swap: dict[str, float] = {}
    real_swap = ws.store.swap_in

    def timed_swap(*a):
        swap["start"] = time.perf_counter()
        try:
            return real_swap(*a)
        finally:
            swap["end"] = time.perf_counter()
    ws.store.swap_in = timed_swap
    result: dict = {}

    def run() -> None:
        t = time.perf_counter()
        result["changed"] = optimize_aside(ws.store, abandon=lambda: False)
        result["wall_s"] = round(time.perf_counter() - t, 1)
    worker = threading.Thread(target=run)
    worker.start()
    during: list[tuple[float, float]] = []  # (start, wall ms)
    for k in range(10**9):
        if not worker.is_alive():
            break
        start = time.perf_counter()
        during.append((start, ask(QUERIES[k % len(QUERIES)])[0]))
        time.sleep(args.gap)
    worker.join()
    after = [ask(q) for q in QUERIES]
    ws.close()
    child = resource.getrusage(resource.RUSAGE_CHILDREN)
    overlapping = [round(ms) for s, ms in during if swap and s <= swap["end"] and s + ms / 1000 >= swap["start"]]
    walls = [ms for _, ms in during]
    return emit({
        "tree": str(args.indexed), "load_avg_1m_start": round(load_start, 2), "load_avg_1m": round(os.getloadavg()[0], 2),
        "optimized": result.get("changed"), "optimize_wall_s": result.get("wall_s"),
        "child_cpu_s": round(child.ru_utime + child.ru_stime, 1),
        "swap_s": round(swap["end"] - swap["start"], 2) if swap else None,
        "idle_p50_ms": round(statistics.median(a[0] for a in idle), 1), "idle_p95_ms": round(percentile([a[0] for a in idle], 95), 1),
        "during_searches": len(walls),
        "during_p50_ms": round(statistics.median(walls), 1) if walls else None,
        "during_p95_ms": round(percentile(walls, 95), 1) if walls else None,
        "during_max_ms": round(max(walls), 1) if walls else None,
        "overlapping_swap_ms": overlapping,
        "after_p50_ms": round(statistics.median(a[0] for a in after), 1),
        "answers_changed": [q for q, a, b in zip(QUERIES, idle, after) if a[2] != b[2]],
    }, args.json)


if __name__ == "__main__":
    sys.exit(main())
