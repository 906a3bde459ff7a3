"""Does the git-history score (``probe eval``) rank ranking variants the way the dev set does?

Scores each variant on the dev set (in-process, the scorer's metric functions, as
``eval_retrieval.py``) and on one or more git histories (``probe_core.evaluation``, the same
code ``probe eval`` runs), then compares the two orderings of the variants with Kendall's tau-b
(1: the same order, 0: unrelated, -1: reversed) on MRR@10 and on R@10.

  uv run python bench/eval_tracking.py --corpus-root /tmp/probe-dev \\
      --history /tmp/probe-hist/probe --history /tmp/probe-hist/mobx-releases --json /tmp/tracking.json

Variants are the ablations of ``docs/benchmarks.md`` (``VARIANTS`` below), each a set of changes
to the default ``RankingSettings``.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from itertools import combinations
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

OFF = {"literal_weight": 0, "identifier_weight": 0, "doc_penalty": 1, "example_penalty": 1, "graph_weight": 0}
VARIANTS: dict[str, dict] = {
    # the signals added one by one, from the ranking before issue 12 to the default
    "before (no new signal)": OFF,
    "+ quoted literals": {**OFF, "literal_weight": 1},
    "+ identifiers": {**OFF, "literal_weight": 1, "identifier_weight": 1},
    "+ docs prior x0.5": {**OFF, "literal_weight": 1, "identifier_weight": 1, "doc_penalty": 0.5},
    "+ examples prior x0.75": {**OFF, "literal_weight": 1, "identifier_weight": 1, "doc_penalty": 0.5,
                               "example_penalty": 0.75},
    "+ graph neighbours (default)": {},
    # each signal left out of the default
    "default without literals": {"literal_weight": 0},
    "default without identifiers": {"identifier_weight": 0},
    "default without docs prior": {"doc_penalty": 1},
    "default without examples prior": {"example_penalty": 1},
    "default without graph": {"graph_weight": 0},
    "default without file evidence": {"file_weight": 0},
    "default without tests prior": {"test_penalty": 1},
    # other settings tried
    "docs prior x0.8": {"doc_penalty": 0.8},
    "docs prior x0.3": {"doc_penalty": 0.3},
    "tests prior x0.6": {"test_penalty": 0.6},
    "graph weight 0.3": {"graph_weight": 0.3},
    "graph weight 1.0": {"graph_weight": 1.0},
    "literal+identifier weight 2": {"literal_weight": 2.0, "identifier_weight": 2.0},
    "dense:bm25 1:2": {"sparse_weight": 2.0},
    "dense:bm25 1:1.5": {"sparse_weight": 1.5},
    "dense:bm25 2:1": {"dense_weight": 2.0},
    "per-file cap 3": {"per_file_cap": 3},
    "per-file cap 2": {"per_file_cap": 2},
}


def kendall_tau_b(xs: list[float], ys: list[float]) -> float:
    """Kendall's tau-b of two paired lists (ties in either list count as neither concordant nor discordant)."""
    concordant = discordant = ties_x = ties_y = 0
    for i, j in combinations(range(len(xs)), 2):
        dx, dy = xs[i] - xs[j], ys[i] - ys[j]
        if abs(dx) < 1e-9 and abs(dy) < 1e-9:
            continue
        if abs(dx) < 1e-9:
            ties_x += 1
        elif abs(dy) < 1e-9:
            ties_y += 1
        elif (dx > 0) == (dy > 0):
            concordant += 1
        else:
            discordant += 1
    denom = ((concordant + discordant + ties_x) * (concordant + discordant + ties_y)) ** 0.5
    return (concordant - discordant) / denom if denom else 0.0


def _means(rows: dict[str, list[dict]]) -> dict[str, dict[str, float]]:
    """Each variant's mean R@10 and MRR@10 over its queries."""
    return {name: {m: statistics.fmean(r[m] for r in rs) for m in ("R@10", "MRR@10")} for name, rs in rows.items()}


def dev_scores(corpus_root: Path, queries_path: Path, scorer_path: Path) -> dict[str, dict[str, float]]:
    from eval_retrieval import _QueryVectorCache, load_scorer, mcp_answer
    from probe_core import Workspace
    from probe_core.retrieval.ranking import RankingSettings

    scorer = load_scorer(scorer_path)
    queries = [json.loads(line) for line in queries_path.read_text().splitlines() if line.strip()]
    queries = [q for q in queries if q["kind"] == "search"]
    rows: dict[str, list[dict]] = {name: [] for name in VARIANTS}
    for corpus in sorted({q["corpus"] for q in queries}):
        ws = Workspace.open(corpus_root / corpus, create=False)
        ws.set_embedder(_QueryVectorCache(ws.embedder))
        for name, changes in VARIANTS.items():
            ranking = RankingSettings.from_dict(changes)
            for q in (q for q in queries if q["corpus"] == corpus):
                out = mcp_answer(ws, q["query"], ranking)
                rows[name].append(scorer.score_search(out["results"], q["gold"]))
        ws.close()
    return _means(rows)


def history_scores(roots: list[Path]) -> tuple[dict[str, dict[str, float]], dict]:
    from eval_retrieval import _QueryVectorCache, mcp_answer
    from probe_core import Workspace
    from probe_core.evaluation import evaluate_history
    from probe_core.retrieval.ranking import RankingSettings

    per_case: dict[str, list[dict]] = {name: [] for name in [*VARIANTS, "bm25"]}
    reports = {}
    for root in roots:
        ws = Workspace.open(root, create=False)
        ws.set_embedder(_QueryVectorCache(ws.embedder))

        def answer(query: str, ranking: dict | None) -> list[dict]:
            return mcp_answer(ws, query, RankingSettings.from_dict(ranking))["results"]

        report = evaluate_history(ws, answer, variants=dict(VARIANTS), max_commits=1000, max_seconds=3600)
        reports[str(root)] = {k: v for k, v in report.to_dict().items() if k != "cases"}
        for case in report.cases:
            for name in per_case:
                per_case[name].append(case.scores[name])
        ws.close()
    return _means(per_case), reports


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus-root", type=Path, required=True)
    ap.add_argument("--queries", type=Path, default=ROOT.parent / "shared/eval/dev/queries.jsonl")
    ap.add_argument("--scorer", type=Path, default=ROOT.parent / "shared/eval/score.py")
    ap.add_argument("--history", type=Path, action="append", required=True, help="a git repository with a Probe index")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--variant", action="append", default=[],
                    help="score these instead of the ablations: NAME or NAME=key=value,... (repeatable)")
    ap.add_argument("--hack", action="append", default=[], help="MODULE:NAME=PYTHON_VALUE: set a module constant")
    args = ap.parse_args()
    from eval_retrieval import apply_hacks, variant_changes

    apply_hacks(args.hack)
    if args.variant:
        VARIANTS.clear()
        VARIANTS.update(variant_changes(spec) for spec in args.variant)

    dev = dev_scores(args.corpus_root, args.queries, args.scorer)
    hist, reports = history_scores(args.history)
    print(f"{'variant':<40} {'dev R@10':>9} {'dev MRR':>8} {'hist R@10':>10} {'hist MRR':>9}")
    for name in VARIANTS:
        print(f"{name:<40} {dev[name]['R@10']:>9.3f} {dev[name]['MRR@10']:>8.3f} "
              f"{hist[name]['R@10']:>10.3f} {hist[name]['MRR@10']:>9.3f}")
    print(f"{'bm25 baseline (history)':<40} {'':>9} {'':>8} {hist['bm25']['R@10']:>10.3f} {hist['bm25']['MRR@10']:>9.3f}")
    taus = {m: kendall_tau_b([dev[n][m] for n in VARIANTS], [hist[n][m] for n in VARIANTS]) for m in ("R@10", "MRR@10")}
    print(f"\nKendall tau-b, dev vs history, over {len(VARIANTS)} variants: "
          + ", ".join(f"{m} {t:+.2f}" for m, t in taus.items()))
    for root, rep in reports.items():
        print(f"  {root}: {rep['commits_evaluated']} commits evaluated of {rep['commits_examined']} read")
    if args.json:
        args.json.write_text(json.dumps({"dev": dev, "history": hist, "tau": taus, "histories": reports}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
