"""Does the dense fill run at the embedder's ceiling, and does it stay out of the way of searches?

  uv run python bench/bench_fill_yield.py --repo /tmp/probe-dev-copy/werkzeug [--seconds 40]

On a cold copy of ``--repo``: the lexical index, then the embedder's raw rate on 128 queued chunks
(the ceiling, measured in this run), then the owner engine (``probe mcp``'s, in process, no
watcher) filling dense vectors: ``--seconds`` alone (its rate against the ceiling), then ``--seconds``
while a client searches every ``--gap`` seconds (search latency while filling, and the fill's rate
meanwhile). Last, the engine is stopped and the same searches run on the idle, partly filled index:
the latency to compare with.

  uv run python bench/bench_fill_yield.py --indexed /tmp/mono-copy --queries scale --seconds 240

``--indexed``: a copy already indexed lexically (``bench_scale.py``'s trees take minutes to index;
it is filled in place, so never pass the pristine tree); ``--queries scale``: ``bench_scale.py``'s
40 queries (Django, sympy, Go) instead of Werkzeug's. The JSON then also holds the dense queue's
size and the hours the whole fill would take at the rate measured (an extrapolation).
"""
from __future__ import annotations

import argparse
import itertools
import os
import random
import shutil
import statistics
import sys
import time
from pathlib import Path
from report import emit, percentile  # noqa: E402  (bench/ is on sys.path when run as a script)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

QUERIES = ["parse a cookie header", "url routing rules", "how are redirects built", "multipart form parsing",
           "debugger console", "password hashing", "request body stream limit", "etag and cache headers",
           "websocket", "serve static files", "test client cookies", "proxy fix headers", "dispatch to app",
           "http date formatting", "range requests", "user agent parsing", "secure filename",
           "reloader watching files", "local proxies and context", "middleware for shared data"]


def latencies(ask, queries, seconds: float, gap: float) -> list[float]:
    """Ask queries in turn for ``seconds``, one every ``gap`` seconds; their latencies in ms."""
    out, end = [], time.perf_counter() + seconds
    for q in itertools.cycle(queries):
        if time.perf_counter() > end:
            return out
        t = time.perf_counter()
        ask(q)
        out.append((time.perf_counter() - t) * 1000)
        time.sleep(gap)


def say(line: str) -> None:
    """A phase's figures as they come (a run cut short still tells what it measured)."""
    print(f"[{time.strftime('%H:%M:%S')}] {line}", file=sys.stderr, flush=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--repo", type=Path, help="copied to --work and indexed lexically first")
    src.add_argument("--indexed", type=Path, help="an indexed copy, filled in place")
    ap.add_argument("--queries", choices=("werkzeug", "scale"), default="werkzeug")
    ap.add_argument("--work", type=Path, default=Path("/tmp/probe-bench-fill"))
    ap.add_argument("--seconds", type=float, default=40)
    ap.add_argument("--gap", type=float, default=0.5, help="seconds between two searches")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--nice", type=int, default=0, help="ablation: renice the owner's worker thread by this much")
    args = ap.parse_args()

    from probe_core import Workspace, index_workspace
    from probe_core.engine.answers import search_answer
    from probe_core.engine.service import OwnerEngine
    from probe_core.engine.settings import EngineSettings
    from probe_core.indexing.dense import texts_to_embed

    queries = QUERIES
    if args.queries == "scale":
        from bench_scale import QUERIES as queries  # noqa: N811 - the scale trees' own queries
    if args.indexed:
        args.work = args.indexed
    else:
        shutil.rmtree(args.work, ignore_errors=True)
        shutil.copytree(args.repo, args.work, ignore=shutil.ignore_patterns(".probe", "__pycache__"))
    ws = Workspace.open(args.work)
    if not args.indexed:
        index_workspace(ws, dense=False)
    start, load_start = ws.manifest.counts(), os.getloadavg()[0]
    sample = [r[2] for r in texts_to_embed(ws, ws.manifest.pending_dense(100_000))]  # as the fill reads them
    random.Random(0).shuffle(sample)
    ws.embedder.embed_documents(sample[:4])  # load the model
    t0 = time.perf_counter()
    ws.embedder.embed_documents(sample[:128])
    raw = 128 / (time.perf_counter() - t0)
    ws.close()
    say(f"embedder ceiling {raw:.1f} chunks/s; coverage at start {start['chunks_dense']}/{start['chunks']}")

    if args.nice:  # the worker thread (scans, dense fill) below the threads that answer searches
        import threading

        work = OwnerEngine._work

        def niced(self):
            tid = threading.get_native_id()
            os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + args.nice)
            work(self)
        OwnerEngine._work = niced
    engine = OwnerEngine(args.work, EngineSettings(watch=False), serve_rpc=False).start()
    engine._sched.first_scan_done.wait(300)
    counts = lambda: engine._ws.manifest.counts()["chunks_dense"]  # noqa: E731 - a bench's probe
    time.sleep(3)  # past the model's warm-up
    c0, t0 = counts(), time.perf_counter()
    time.sleep(args.seconds)
    alone = (counts() - c0) / (time.perf_counter() - t0)
    say(f"fill alone {alone:.1f} chunks/s ({alone / raw:.2f} of the ceiling)")
    c0, t0 = counts(), time.perf_counter()
    busy = latencies(lambda q: engine.search(q, top_k=10), queries, args.seconds, args.gap)
    with_queries = (counts() - c0) / (time.perf_counter() - t0)
    say(f"while searching: fill {with_queries:.1f} chunks/s, search p50 {statistics.median(busy):.1f} ms, "
        f"p95 {percentile(busy, 95):.1f} ms over {len(busy)}")
    engine.close()

    ws = Workspace.open(args.work)
    coverage = ws.manifest.counts()
    for q in queries[:2]:  # the engine was warm (model, vocabulary): so is the idle side
        search_answer(ws, q, top_k=10)
    idle = latencies(lambda q: (ws.touch(), search_answer(ws, q, top_k=10)), queries, min(args.seconds, 20), args.gap)
    ws.close()
    out = {
        "repo": str(args.repo or args.indexed), "nice": args.nice, "cpus": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 2),
        "load_avg_1m_start": round(load_start, 2),
        "raw_embed_chunks_per_s": round(raw, 1), "fill_chunks_per_s": round(alone, 1),
        "fill_vs_raw": round(alone / raw, 3), "fill_chunks_per_s_while_searching": round(with_queries, 1),
        "search_while_filling_p50_ms": round(statistics.median(busy), 1), "search_while_filling_p95_ms": round(percentile(busy, 95), 1),
        "search_idle_p50_ms": round(statistics.median(idle), 1), "search_idle_p95_ms": round(percentile(idle, 95), 1),
        "searches": [len(busy), len(idle)], "coverage_at_end": round(coverage["chunks_dense"] / coverage["chunks"], 3),
        "chunks": coverage["chunks"], "coverage_at_start": round(start["chunks_dense"] / start["chunks"], 4),
        "full_fill_hours_at_fill_rate": round(coverage["chunks"] / max(alone, 1e-9) / 3600, 1),
        "full_fill_hours_at_raw_rate": round(coverage["chunks"] / raw / 3600, 1),
    }
    return emit(out, args.json)


if __name__ == "__main__":
    sys.exit(main())
