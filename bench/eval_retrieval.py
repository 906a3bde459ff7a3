"""Compare embedders and fusion settings on the dev retrieval set, in-process.

Indexes each corpus once per embedder (a copy under --work, so each embedder has its own
``.probe/``), then scores every search query with the official scorer's metric functions
(``shared/eval/score.py``), for each fusion setting given. The official end-to-end run is
``score.py --probe ... --baselines``; this script is for choosing between options quickly.

  uv run python bench/eval_retrieval.py --corpus-root /tmp/probe-dev --embedders minilm,static:/tmp/probe-m2v \
      --weights 1:1,2:1,1:2
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def load_scorer(path: Path):
    spec = importlib.util.spec_from_file_location("probe_score", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus-root", type=Path, required=True)
    ap.add_argument("--queries", type=Path, default=ROOT.parent / "shared/eval/dev/queries.jsonl")
    ap.add_argument("--scorer", type=Path, default=ROOT.parent / "shared/eval/score.py")
    ap.add_argument("--work", type=Path, default=Path("/tmp/probe-eval"))
    ap.add_argument("--embedders", default="minilm")
    ap.add_argument("--weights", default="1:1", help="dense:sparse RRF weights to try, comma-separated")
    ap.add_argument("--top-k", type=int, default=10)
    ap.add_argument("--corpora", help="comma-separated subset")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--no-context-header", action="store_true", help="ablation: index raw chunk text")
    ap.add_argument("--test-penalty", type=float, default=None, help="override search.TEST_PENALTY")
    args = ap.parse_args()

    from probe_core import Workspace, index_workspace
    from probe_core.retrieval import search as search_mod

    from probe_core.indexing import indexer as indexer_mod

    indexer_mod.CONTEXT_HEADER = not args.no_context_header
    if args.test_penalty is not None:
        search_mod.TEST_PENALTY = args.test_penalty
    scorer = load_scorer(args.scorer)
    queries = [json.loads(l) for l in args.queries.read_text().splitlines() if l.strip()]
    queries = [q for q in queries if q["kind"] == "search"]
    corpora = sorted({q["corpus"] for q in queries})
    if args.corpora:
        corpora = [c for c in corpora if c in args.corpora.split(",")]
    table = []
    for emb in args.embedders.split(","):
        os.environ["PROBE_EMBEDDER"] = emb
        tag = emb.replace("/", "_").replace(":", "_") + ("-raw" if args.no_context_header else "")
        for corpus in corpora:
            dst = args.work / tag / corpus
            if not dst.exists():
                shutil.copytree(args.corpus_root / corpus, dst, ignore=shutil.ignore_patterns(".probe"))
            ws = Workspace.open(dst)
            t0 = time.perf_counter()
            rep = index_workspace(ws)
            index_s = time.perf_counter() - t0
            for w in args.weights.split(","):
                wd, wsp = (float(x) for x in w.split(":"))
                search_mod.DEFAULT_WEIGHTS = (wd, wsp)
                rows, lat = [], []
                for q in (q for q in queries if q["corpus"] == corpus):
                    t1 = time.perf_counter()
                    resp = search_mod.search(ws, q["query"], top_k=args.top_k)
                    lat.append((time.perf_counter() - t1) * 1000)
                    res = [{"path": r.path, "start_line": r.start_line, "end_line": r.end_line} for r in resp.results]
                    rows.append(scorer.score_search(res, q["gold"]))
                agg = {m: statistics.fmean(r[m] for r in rows) for m in ("R@1", "R@5", "R@10", "MRR@10", "nDCG@10")}
                table.append({"embedder": emb, "corpus": corpus, "weights": w, "n": len(rows),
                              "chunks": rep.chunks_indexed or ws.manifest.counts()["chunks"],
                              "index_s": round(index_s, 1), "p50_ms": round(statistics.median(lat), 1),
                              **{k: round(v, 3) for k, v in agg.items()}})
                print(json.dumps(table[-1]), flush=True)
            ws.close()
    # pooled over corpora (as the scorer's OVERALL)
    print("\nembedder weights  R@1   R@5   R@10  MRR@10 nDCG@10")
    for emb in args.embedders.split(","):
        for w in args.weights.split(","):
            sel = [t for t in table if t["embedder"] == emb and t["weights"] == w]
            n = sum(t["n"] for t in sel)
            pooled = {m: sum(t[m] * t["n"] for t in sel) / n for m in ("R@1", "R@5", "R@10", "MRR@10", "nDCG@10")}
            print(f"{emb:<24} {w:<6} " + " ".join(f"{pooled[m]:.3f}" for m in ("R@1", "R@5", "R@10", "MRR@10", "nDCG@10")))
    if args.json:
        args.json.write_text(json.dumps(table, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
