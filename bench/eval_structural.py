#!/usr/bin/env python3
"""Score probe's code intelligence on the dev set's structural queries against the grep baseline.

For each corpus (already indexed in ``<corpus-root>/<corpus>/.probe/``; the symbol graph is
brought up to date first) every structural query is answered by ``probe_core.intel`` directly,
its JSON result turned into locations exactly as the official scorer does (``all_locations``),
and scored with the scorer's ``score_struct``. The baseline is the scorer's own: the
``rg -n -w -F SYMBOL`` matches. Prints a per-kind table (P / R / F1, means over queries).

    uv run python bench/eval_structural.py --corpus-root /tmp/probe-dev [--verbose] [--json OUT]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

KINDS = ("callers", "callees", "references", "implementations")


def load_scorer(path: Path):
    spec = importlib.util.spec_from_file_location("probe_score", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def answer(ws, q) -> dict:
    from probe_core import intel

    fn = {"callers": intel.find_callers, "callees": intel.find_callees,
          "references": intel.find_references, "implementations": intel.find_implementations}[q["kind"]]
    return fn(ws, q["symbol"], q.get("file"), q.get("line")).to_dict()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus-root", type=Path, required=True)
    ap.add_argument("--queries", type=Path, default=ROOT.parent / "shared/eval/dev/queries.jsonl")
    ap.add_argument("--scorer", type=Path, default=ROOT.parent / "shared/eval/score.py")
    ap.add_argument("--corpora", help="comma-separated subset")
    ap.add_argument("--verbose", "-v", action="store_true", help="per-query lines with misses and extras")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    from probe_core import Workspace
    from probe_core.intel import ensure_graph

    scorer = load_scorer(args.scorer)
    queries = [json.loads(line) for line in args.queries.read_text().splitlines() if line.strip()]
    queries = [q for q in queries if q["kind"] in KINDS]
    if args.corpora:
        keep = set(args.corpora.split(","))
        queries = [q for q in queries if q["corpus"] in keep]

    rows: dict[str, dict[str, list[dict]]] = {"probe": defaultdict(list), "grep": defaultdict(list)}
    latency: list[float] = []
    per_query = []
    for corpus in sorted({q["corpus"] for q in queries}):
        root = args.corpus_root / corpus
        ws = Workspace.open(root, create=False)
        t0 = time.perf_counter()
        built = ensure_graph(ws)
        print(f"[{corpus}] graph: {built} in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
        for q in (q for q in queries if q["corpus"] == corpus):
            anchor = (q.get("file"), q.get("line"))
            t0 = time.perf_counter()
            try:
                result = answer(ws, q)
                locs = scorer.all_locations([result], str(root))
            except Exception as exc:  # noqa: BLE001 - a failed query scores 0, as in the scorer
                print(f"  {q['id']}: error {type(exc).__name__}: {exc}", file=sys.stderr)
                result, locs = {}, []
            latency.append((time.perf_counter() - t0) * 1000)
            mine = scorer.score_struct(locs, q["gold"], anchor)
            grep_locs = [{"path": p, "start_line": l, "end_line": l}
                         for p, l in scorer.rg(str(root), ["-w", "-F", "-e", q["symbol"]])]
            base = scorer.score_struct(grep_locs, q["gold"], anchor)
            rows["probe"][q["kind"]].append(mine)
            rows["grep"][q["kind"]].append(base)
            per_query.append({"id": q["id"], "kind": q["kind"], "probe": mine, "grep": base})
            if args.verbose:
                gold = {(g["path"], g["line"]) for g in q["gold"]}
                got = {(l["path"], l["start_line"]) for l in locs}
                missed = sorted(g for g in gold if not any(p == g[0] and abs(ln - g[1]) <= 2 for p, ln in got))
                extra = sorted(g for g in got if not any(p == g[0] and abs(ln - g[1]) <= 2 for p, ln in gold)
                               and not (g[0] == q.get("file") and abs(g[1] - (q.get("line") or 0)) <= 2))
                print(f"  {q['id']:16} {q['kind']:15} F1 {mine['F1']:.2f} (grep {base['F1']:.2f})"
                      f" missed={missed[:6]} extra={extra[:6]}", file=sys.stderr)
        ws.close()

    def mean(xs, key):
        return statistics.fmean(x[key] for x in xs) if xs else 0.0

    print(f"\n| kind | n | probe P | probe R | probe F1 | grep P | grep R | grep F1 | ΔF1 |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for kind in (*KINDS, "ALL"):
        mine = [r for k in KINDS for r in rows["probe"][k]] if kind == "ALL" else rows["probe"][kind]
        base = [r for k in KINDS for r in rows["grep"][k]] if kind == "ALL" else rows["grep"][kind]
        print(f"| {kind} | {len(mine)} | {mean(mine, 'P'):.3f} | {mean(mine, 'R'):.3f} | {mean(mine, 'F1'):.3f} |"
              f" {mean(base, 'P'):.3f} | {mean(base, 'R'):.3f} | {mean(base, 'F1'):.3f} |"
              f" {mean(mine, 'F1') - mean(base, 'F1'):+.3f} |")
    if latency:
        lat = sorted(latency)
        print(f"\nlatency per query (in-process, warm graph): p50 {lat[len(lat) // 2]:.0f} ms, max {lat[-1]:.0f} ms")
    if args.json:
        args.json.write_text(json.dumps({"queries": per_query}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
