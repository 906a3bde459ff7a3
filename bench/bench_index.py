"""Index a real repository and report throughput, memory and search latency.

  uv run python bench/bench_index.py --repo .venv/lib/python3.11/site-packages/textual [--embedder minilm]

Reports: scan+chunk+BM25 time (lexically searchable), dense throughput against the embedder's
raw throughput measured in the same run, files/s, chunks/s, peak RSS, and warm search p50/p95
over ≥ 50 queries. Copies the repository to a scratch folder so each run starts cold.
"""
from __future__ import annotations

import argparse
import os
import platform
import random
import resource
import shutil
import statistics
import sys
import time
from pathlib import Path
from report import emit, percentile  # noqa: E402  (bench/ is on sys.path when run as a script)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

QUERIES = [
    "how is keyboard input dispatched to the focused widget", "render text with styles", "parse a CSS selector",
    "timer that fires at an interval", "where are key bindings declared", "handle mouse click events",
    "compute layout of a container", "scroll a view to make a region visible", "load a stylesheet from a file",
    "message queue of a widget", "how does the app exit", "reactive attribute watchers", "color parsing from hex",
    "table with rows and columns", "tree control expanding nodes", "input field validation", "screen stack push pop",
    "command palette search", "logging to the devtools console", "measure the width of a unicode string",
]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", type=Path, required=True)
    ap.add_argument("--work", type=Path, default=Path("/tmp/probe-bench-index"))
    ap.add_argument("--embedder", default=os.environ.get("PROBE_EMBEDDER", "minilm"))
    ap.add_argument("--max-dense-seconds", type=float, default=0, help="stop dense fill after this long (0 = all)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    os.environ["PROBE_EMBEDDER"] = args.embedder

    from probe_core import Workspace, index_workspace, search
    from probe_core.indexing.indexer import fill_dense
    from probe_core.indexing.dense import texts_to_embed
    from probe_core.records import IndexProgress

    shutil.rmtree(args.work, ignore_errors=True)
    shutil.copytree(args.repo, args.work, ignore=shutil.ignore_patterns(".probe", "__pycache__"))
    ws = Workspace.open(args.work)
    marks: dict[str, float] = {}
    t0 = time.perf_counter()

    def on_progress(p: IndexProgress):
        if p.phase == "dense" and "lexical_ready" not in marks:
            marks["lexical_ready"] = time.perf_counter() - t0

    rep = index_workspace(ws, progress=on_progress, dense=False)
    marks["lexical_ready"] = time.perf_counter() - t0
    lines = sum(len((args.work / p).read_bytes().splitlines()) for p in ws.manifest.file_paths())

    # raw embedder throughput on the same chunks, measured in this run
    sample = [r[2] for r in texts_to_embed(ws, ws.manifest.pending_dense(100_000))]  # as the fill reads them
    random.Random(0).shuffle(sample)
    sample = sample[:128]
    emb = ws.embedder
    emb.embed_documents(sample[:4])  # load the model
    t1 = time.perf_counter()
    emb.embed_documents(sample)
    raw = len(sample) / (time.perf_counter() - t1)

    t2 = time.perf_counter()
    deadline = t2 + args.max_dense_seconds if args.max_dense_seconds else None
    embedded = fill_dense(ws, should_stop=lambda: deadline is not None and time.perf_counter() > deadline)
    dense_s = time.perf_counter() - t2
    dense_rate = embedded / dense_s if dense_s else 0.0

    # warm search latency over >= 50 queries
    queries = QUERIES + [f"{s}" for s in random.Random(1).sample(
        [r[0] for r in ws.manifest._db.execute("SELECT DISTINCT symbol FROM chunks WHERE symbol IS NOT NULL")], 40)]
    for q in queries[:5]:
        search(ws, q)
    lat = []
    for q in queries:
        ws.touch()  # defeat the cache: measure real searches
        t = time.perf_counter()
        search(ws, q, top_k=10)
        lat.append((time.perf_counter() - t) * 1000)
    counts = ws.manifest.counts()
    out = {
        "machine": f"{platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}",
        "repo": str(args.repo), "embedder": emb.model_id,
        "files": counts["files"], "lines": lines, "chunks": counts["chunks"],
        "lexical_ready_s": round(marks["lexical_ready"], 2),
        "files_per_s_lexical": round(counts["files"] / marks["lexical_ready"], 1),
        "chunks_per_s_lexical": round(counts["chunks"] / marks["lexical_ready"], 1),
        "raw_embed_chunks_per_s": round(raw, 1), "dense_chunks_per_s": round(dense_rate, 1),
        "dense_vs_raw": round(dense_rate / raw, 3) if raw else None,
        "chunks_embedded": counts["chunks_dense"], "dense_s": round(dense_s, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "search_queries": len(lat), "search_p50_ms": round(statistics.median(lat), 1),
        "search_p95_ms": round(percentile(lat, 95), 1),
        "files_skipped": rep.files_skipped,
    }
    ws.close()
    return emit(out, args.json)


if __name__ == "__main__":
    sys.exit(main())
