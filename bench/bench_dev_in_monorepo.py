"""The dev set asked inside a monorepo: do rankings hold with millions of lines around the answer?

The dev corpora are 10k–40k-line repositories; a user asks the same kind of question in a tree a
hundred times larger. This bench puts the four dev corpora under ``dev/<corpus>/`` of a copy of a
scale tree (``bench_scale.py``'s monorepo: Django, sympy and Go's standard library), indexes it
lexically, and scores every search query of the dev set there, the way ``probe mcp`` answers it
(``eval_retrieval.mcp_answer``), with the official scorer's metric functions. A hit outside the
query's own corpus is a miss. Then the dense queue is filled, in Probe's own fill order, to each of
``--levels`` percent of all chunks, and the set is scored again: the state a user meets during the
first hours of a monorepo's fill. The corpora keep their files' modification times, so they are
filled as any subproject nobody is editing is, not first.

  uv run python bench/bench_dev_in_monorepo.py --tree /tmp/probe-scale/monorepo \\
      --corpus-root /tmp/probe-dev --work /tmp/probe-dev-in-mono [--levels 0,2,5] [--json out.json]

``--scoped`` also asks each query limited to its corpus's folder (``include_globs``), as an agent
told which project it works in would: what is left of the gap is the index's, not the distractors'.
``--reuse`` keeps an index already built under ``--work`` (its fill only grows). Compare with
``bench_partial_fill.py --levels 0`` (each corpus alone, lexical-only): what the distractors cost.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_partial_fill import CachedEmbedder, fill_to  # noqa: E402
from eval_retrieval import load_scorer, mcp_answer  # noqa: E402

PREFIX = "dev"


def build(tree: Path, corpus_root: Path, corpora: list[str], dst: Path) -> None:
    """A copy of ``tree`` with each corpus under ``dev/<corpus>/`` (no ``.probe/`` copied)."""
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(tree, dst, ignore=shutil.ignore_patterns(".probe"), symlinks=True)
    for corpus in corpora:
        shutil.copytree(corpus_root / corpus, dst / PREFIX / corpus, ignore=shutil.ignore_patterns(".probe"),
                        symlinks=True)


def answer_paths(results: list[dict], corpus: str) -> list[dict]:
    """Results as the scorer reads them, paths relative to the query's corpus; a hit elsewhere in
    the tree keeps a path no gold range has."""
    head = f"{PREFIX}/{corpus}/"
    return [{"path": r["path"][len(head):] if r["path"].startswith(head) else f"../{r['path']}",
             "start_line": r["start_line"], "end_line": r["end_line"], "kind": r["chunk_kind"]} for r in results]


def scoped_answer(ws, query: str, corpus: str) -> dict:
    """``mcp_answer`` with the search limited to the corpus's folder (``include_globs``), as an agent
    that knows which project it works in asks."""
    from probe_core.engine.answers import fit_budget
    from probe_core.engine.settings import EngineSettings
    from probe_core.retrieval.search import search

    out = search(ws, query, top_k=10, filters={"include_globs": [f"{PREFIX}/{corpus}/**"]}).to_dict()
    fit_budget(out["results"], EngineSettings().default_max_tokens)
    return out


def score_level(ws, queries: list[dict], scorer, level: int, coverage: float, scopes: list[str]) -> list[dict]:
    rows = []
    for scope in scopes:
        for q in queries:
            ws.touch(lexical=False)  # no answer from the search cache; what only a file change moves is kept
            t0 = time.perf_counter()
            out = mcp_answer(ws, q["query"], None) if scope == "tree" else scoped_answer(ws, q["query"], q["corpus"])
            took = (time.perf_counter() - t0) * 1000
            res = answer_paths(out["results"], q["corpus"])
            rows.append({"level": level, "coverage": coverage, "scope": scope, "id": q["id"], "corpus": q["corpus"],
                         "tag": q["tags"][0], "ms": took, "outside": sum(r["path"].startswith("../") for r in res),
                         "metrics": scorer.score_search(res, q["gold"])})
    return rows


def report(all_rows: list[dict], levels: list[int], corpora: list[str]) -> None:
    for scope in dict.fromkeys(r["scope"] for r in all_rows):
        print(f"\nasked {'of the whole tree' if scope == 'tree' else 'within the corpus folder (include_globs)'}")
        report_scope([r for r in all_rows if r["scope"] == scope], levels, corpora)


def report_scope(rows: list[dict], levels: list[int], corpora: list[str]) -> None:
    def mean(sel, m):
        return statistics.fmean(r["metrics"][m] for r in sel) if sel else float("nan")

    print("R@10 / MRR@10 (hits outside the corpus among the top 10, mean) by fill level")
    print(f"{'':<10}" + "".join(f"{f'{lv} %':>26}" for lv in levels))
    for corpus in [None, *corpora]:
        cells = []
        for lv in levels:
            sel = [r for r in rows if r["level"] == lv and corpus in (None, r["corpus"])]
            outside = statistics.fmean(r["outside"] for r in sel) if sel else float("nan")
            cells.append(f"{mean(sel, 'R@10'):.3f} / {mean(sel, 'MRR@10'):.3f} ({outside:.1f})")
        print(f"{corpus or 'pooled':<10}" + "".join(f"{c:>26}" for c in cells))
    for lv in levels:
        sel = [r for r in rows if r["level"] == lv]
        for tag in sorted({r["tag"] for r in sel}):
            print(f"  {lv} % {tag}: MRR@10 {mean([r for r in sel if r['tag'] == tag], 'MRR@10'):.3f}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", type=Path, required=True, help="the scale tree (copied, never indexed in place)")
    ap.add_argument("--corpus-root", type=Path, required=True, help="the dev corpora (copied)")
    ap.add_argument("--queries", type=Path, default=ROOT.parent / "shared/eval/dev/queries.jsonl")
    ap.add_argument("--scorer", type=Path, default=ROOT.parent / "shared/eval/score.py")
    ap.add_argument("--work", type=Path, default=Path("/tmp/probe-dev-in-mono"))
    ap.add_argument("--levels", default="0,2,5", help="percent of all chunks with a vector, rising")
    ap.add_argument("--reuse", action="store_true", help="keep the index already under --work")
    ap.add_argument("--scoped", action="store_true", help="also ask each query within its corpus's folder")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    from probe_core import Workspace, index_workspace

    scorer = load_scorer(args.scorer)
    queries = [json.loads(line) for line in args.queries.read_text().splitlines() if line.strip()]
    queries = [q for q in queries if q["kind"] == "search"]
    corpora = sorted({q["corpus"] for q in queries})
    levels = [int(x) for x in args.levels.split(",")]
    dst = args.work / "tree"
    if not (args.reuse and (dst / ".probe").exists()):
        build(args.tree, args.corpus_root, corpora, dst)
    ws = Workspace.open(dst)
    emb = CachedEmbedder(ws.embedder, args.work / "vectors.npz")
    ws.set_embedder(emb)
    t0 = time.perf_counter()
    index_workspace(ws, dense=False)
    counts = ws.manifest.counts()
    print(f"lexical index: {counts['chunks']} chunks, {time.perf_counter() - t0:.0f} s", flush=True)
    rows: list[dict] = []
    for level in levels:
        t0 = time.perf_counter()
        coverage = fill_to(ws, level / 100)
        dev = [pid for pid, path in ws.manifest.chunk_ids(live=True).items() if path.startswith(f"{PREFIX}/")]
        dev_dense = len(dev) - len(ws.manifest.without_dense(dev))  # the dev corpora's chunks with a vector
        rows += score_level(ws, queries, scorer, level, coverage, ["tree", "corpus"] if args.scoped else ["tree"])
        emb.save()
        print(f"  {level:>3} % (coverage {coverage:.4f}, fill {time.perf_counter() - t0:.0f} s, dev chunks with a "
              f"vector {dev_dense}/{len(dev)}, {emb.computed} embedded so far)", flush=True)
    ws.close()
    report(rows, levels, corpora)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
