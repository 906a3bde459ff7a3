"""Search cost by stage on an already indexed tree: what grows with the repository.

  python bench/bench_search_stages.py --tree /tmp/copy-of-monorepo [--code /work/main] [--repeat 3] [--json out.json]
  python bench/bench_search_stages.py --tree /tmp/copy-of-werkzeug --queries /work/shared/eval/dev/queries.jsonl --corpus werkzeug
  python bench/bench_search_stages.py --tree /tmp/monorepo-with-dev --queries dev/queries.jsonl --corpus werkzeug --scope dev

Opens the tree's index (``bench_scale.py measure`` builds one; copy it first: searching writes
caches, and a second process cannot open a shard held by another), warms up with two searches,
then runs ``bench_scale.py``'s 40 queries ``--repeat`` times with the answer cache cleared, and
reports per query the run with the least CPU: search ``took_ms`` and CPU ms p50 / p95, and the mean
CPU ms of each stage (the store's BM25/dense lists, the query's embedding, the exact-match lists,
the graph neighbours, the following-chunk joins, fusion and priors, the query vocabulary).
``--code DIR`` measures another checkout's ``probe_core`` (main's, for a before/after on the same
copy and in the same minutes). The top 10 of every query (paths, lines, scores) go to ``--json``, to compare answers across checkouts.
``--queries FILE`` asks a dev-set file's search queries instead (``--corpus`` keeps one corpus's;
``--scope DIR``: each asked with ``include_globs: ["DIR/<corpus>/**"]``, in a tree holding the corpora
under ``DIR/``, as ``bench_dev_in_monorepo.py`` builds it): the same questions on a corpus indexed
alone and inside a monorepo (``bench_same_questions.py`` runs both and takes the ratios).
CPU time is the process's (threads included): on a shared machine it moves less than wall time.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STAGES = {"store": None, "exact_lists": "exact", "_with_graph_neighbours": "graph", "join_following": "following",
          "fuse": "fuse", "apply_priors": "priors", "expand_tiny": "expand", "query_expansion": "vocabulary",
          "query_vector": "embed"}


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def load_queries(path: Path | None, corpus: str | None, scope: str | None) -> list[tuple[str, str, dict | None]]:
    """(id, query, filters) of each query to ask: ``bench_scale.py``'s 40 (no file), or the search
    queries of a dev-set file (one corpus's when ``corpus``), within ``scope/<corpus>/`` when ``scope``."""
    if path is None:
        from bench_scale import QUERIES

        return [(q, q, None) for q in QUERIES]
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r["kind"] == "search" and corpus in (None, r["corpus"])]
    return [(r["id"], r["query"], {"include_globs": [f"{scope}/{r['corpus']}/**"]} if scope else None) for r in rows]


def measure(tree: Path, repeat: int, queries: list[tuple[str, str, dict | None]]) -> dict:
    from probe_core import Workspace, search
    import probe_core.retrieval.search as search_module

    spent: dict[str, float] = collections.defaultdict(float)

    def timed(owner, name: str, label: str) -> None:
        real = getattr(owner, name)

        def run(*args, **kwargs):
            t = time.process_time()
            try:
                return real(*args, **kwargs)
            finally:
                spent[label] += (time.process_time() - t) * 1000
        setattr(owner, name, run)

    for name, label in STAGES.items():
        if label:
            timed(search_module, name, label)
    t = time.process_time()
    ws = Workspace.open(tree)
    timed(ws.store, "hybrid_query", "store")
    search(ws, "warm up the caches")
    first_ms = (time.process_time() - t) * 1000
    search(ws, "warm_up the_caches")
    warming = getattr(ws.store, "warming", None)  # the store's page-cache warm-up (storage/edge_warm.py)
    if warming is not None:
        warming.join()
    best: dict[str, dict] = {}
    tops: dict[str, list] = {}
    for _ in range(repeat):
        for q, text, filters in queries:
            search_module._cache._data.clear()
            spent.clear()
            c = time.process_time()
            res = search(ws, text, top_k=10, filters=filters)
            row = {"cpu_ms": (time.process_time() - c) * 1000, "took_ms": res.took_ms, **spent}
            if q not in best or row["cpu_ms"] < best[q]["cpu_ms"]:
                best[q] = row
            tops.setdefault(q, [[r.path, r.start_line, r.end_line, round(r.score, 6)] for r in res.results])
    ws.close()
    cpu = [b["cpu_ms"] for b in best.values()]
    took = [b["took_ms"] for b in best.values()]
    return {"tree": str(tree), "repeat": repeat, "load_average": os.getloadavg()[0],
            "open_and_first_search_cpu_ms": round(first_ms, 1),
            "took_p50_ms": round(statistics.median(took), 1), "took_p95_ms": round(percentile(took, 95), 1),
            "cpu_p50_ms": round(statistics.median(cpu), 1), "cpu_p95_ms": round(percentile(cpu, 95), 1),
            "stage_mean_cpu_ms": {label: round(statistics.mean(b.get(label, 0.0) for b in best.values()), 2)
                                  for label in ("store", *filter(None, STAGES.values()))},
            "per_query": best, "tops": tops}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", type=Path, required=True)
    ap.add_argument("--code", type=Path, help="a checkout whose probe_core to measure (default: this one)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--queries", type=Path, help="a dev-set queries.jsonl (default: bench_scale.py's 40 queries)")
    ap.add_argument("--corpus", help="only this corpus's queries of --queries")
    ap.add_argument("--scope", help="ask each within SCOPE/<corpus>/** (include_globs)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    sys.path.insert(0, str((args.code or ROOT).resolve()))
    sys.path.insert(1, str(ROOT / "bench"))
    out = measure(args.tree, args.repeat, load_queries(args.queries, args.corpus, args.scope))
    out.update(code=str(args.code or ROOT), queries=str(args.queries or "bench_scale"), corpus=args.corpus,
               scope=args.scope)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    print(json.dumps({k: v for k, v in out.items() if k not in ("per_query", "tops")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
