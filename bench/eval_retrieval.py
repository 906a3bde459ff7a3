"""Score ranking variants and embedders on the dev retrieval set, in-process.

Every search query of ``shared/eval/dev/queries.jsonl`` is answered the way ``probe mcp`` answers
it (``probe_core.search`` with the MCP tool's default token budget) and scored with the official
scorer's own metric functions (``shared/eval/score.py``): per corpus, pooled, and MRR@10 per
query tag. The official end-to-end run is ``score.py --probe ... --baselines``; this script is for
comparing options quickly, and every gain it shows is confirmed with the official run.

  # ranking variants over the indexes the official run left in the corpora (no re-embedding)
  uv run python bench/eval_retrieval.py --corpus-root /tmp/probe-dev --in-place \\
      --variant base --variant doc06=doc_penalty=0.6 --variant nolit=literal_weight=0,identifier_weight=0

  # embedders (each indexes a copy of every corpus under --work)
  uv run python bench/eval_retrieval.py --corpus-root /tmp/probe-dev --embedders minilm,static:/tmp/probe-m2v

A variant is ``NAME`` (the defaults) or ``NAME=key=value,key=value`` over ``RankingSettings``.
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
METRICS = ("R@1", "R@5", "R@10", "MRR@10", "nDCG@10")


def load_scorer(path: Path):
    spec = importlib.util.spec_from_file_location("probe_score", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def variant_changes(spec: str) -> tuple[str, dict[str, float]]:
    """``NAME=key=value,key=value`` → (NAME, {key: value}); ``NAME`` alone is the defaults."""
    name, _, rest = spec.partition("=")
    return name, {k: float(v) for k, _, v in (item.partition("=") for item in rest.split(",") if item)}


def parse_variant(spec: str):
    from probe_core.retrieval.ranking import RankingSettings

    name, changes = variant_changes(spec)
    return name, RankingSettings.from_dict(changes)


def apply_hacks(hacks: list[str]) -> None:
    """``MODULE:NAME=PYTHON_VALUE``: set a module constant (ablations of what is not a ranking setting)."""
    import importlib

    for hack in hacks:
        module, _, rest = hack.partition(":")
        name, _, value = rest.partition("=")
        setattr(importlib.import_module(module), name, eval(value))  # noqa: S307 - a benchmark's own flag


class _QueryVectorCache:
    """The embedder, remembering query vectors: variants re-ask the same queries."""

    def __init__(self, inner):
        self._inner, self._memo = inner, {}

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def embed_query(self, text, instruction=None):
        key = (text, instruction)
        if key not in self._memo:
            self._memo[key] = self._inner.embed_query(text, instruction)
        return self._memo[key]


def mcp_answer(ws, query: str, ranking, top_k: int = 10) -> dict:
    """``search`` as ``probe mcp`` answers it: the results trimmed to the search tool's default token
    budget (the scorer calls it without max_tokens)."""
    from probe_core.engine.answers import fit_budget
    from probe_core.engine.settings import EngineSettings
    from probe_core.retrieval.search import search

    out = search(ws, query, top_k=top_k, ranking=ranking).to_dict()
    fit_budget(out["results"], EngineSettings().default_max_tokens)
    return out


def pooled(rows: list[dict]) -> dict:
    return {m: statistics.fmean(r["metrics"][m] for r in rows) for m in METRICS} if rows else {}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus-root", type=Path, required=True)
    ap.add_argument("--queries", type=Path, default=ROOT.parent / "shared/eval/dev/queries.jsonl")
    ap.add_argument("--scorer", type=Path, default=ROOT.parent / "shared/eval/score.py")
    ap.add_argument("--in-place", action="store_true", help="use (and update) the indexes inside the corpora")
    ap.add_argument("--work", type=Path, default=Path("/tmp/probe-eval"), help="copies, when not --in-place")
    ap.add_argument("--embedders", default="minilm")
    ap.add_argument("--variant", action="append", default=[], help="NAME or NAME=key=value,... (repeatable)")
    ap.add_argument("--top-k", type=int, default=10)
    ap.add_argument("--corpora", help="comma-separated subset")
    ap.add_argument("--json", type=Path, help="write every query's results and metrics here")
    ap.add_argument("--no-context-header", action="store_true", help="ablation: index raw chunk text")
    ap.add_argument("--hack", action="append", default=[], help="MODULE:NAME=PYTHON_VALUE: set a module constant")
    args = ap.parse_args()
    apply_hacks(args.hack)

    from probe_core import Workspace, index_workspace
    from probe_core.indexing import indexer as indexer_mod

    indexer_mod.CONTEXT_HEADER = not args.no_context_header
    scorer = load_scorer(args.scorer)
    variants = [parse_variant(v) for v in (args.variant or ["default"])]
    queries = [json.loads(line) for line in args.queries.read_text().splitlines() if line.strip()]
    queries = [q for q in queries if q["kind"] == "search"]
    corpora = sorted({q["corpus"] for q in queries})
    if args.corpora:
        corpora = [c for c in corpora if c in args.corpora.split(",")]
    rows: list[dict] = []
    for emb in args.embedders.split(","):
        os.environ["PROBE_EMBEDDER"] = emb
        tag = emb.replace("/", "_").replace(":", "_") + ("-raw" if args.no_context_header else "")
        for corpus in corpora:
            dst = args.corpus_root / corpus
            if not args.in_place:
                dst = args.work / tag / corpus
                if not dst.exists():
                    shutil.copytree(args.corpus_root / corpus, dst, ignore=shutil.ignore_patterns(".probe"))
            ws = Workspace.open(dst)
            t0 = time.perf_counter()
            index_workspace(ws)
            index_s = time.perf_counter() - t0
            ws.set_embedder(_QueryVectorCache(ws.embedder))
            for name, ranking in variants:
                for q in (q for q in queries if q["corpus"] == corpus):
                    t1 = time.perf_counter()
                    out = mcp_answer(ws, q["query"], ranking, args.top_k)
                    ms = (time.perf_counter() - t1) * 1000
                    res = [{"path": r["path"], "start_line": r["start_line"], "end_line": r["end_line"],
                            "kind": r["chunk_kind"], "signals": r["signals"]} for r in out["results"]]
                    rows.append({"embedder": emb, "variant": name, "corpus": corpus, "id": q["id"],
                                 "tag": q["tags"][0], "ms": ms, "index_s": index_s, "returned": res,
                                 "metrics": scorer.score_search(res, q["gold"])})
            ws.close()
    _report(rows, corpora, [e for e in args.embedders.split(",")], [n for n, _ in variants])
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


def _report(rows: list[dict], corpora: list[str], embedders: list[str], variants: list[str]) -> None:
    tags = sorted({r["tag"] for r in rows})
    head = f"{'embedder':<12} {'variant':<22} " + " ".join(f"{c[:10]:>17}" for c in corpora)
    print("\nR@10 / MRR@10 per corpus, then pooled (R@1 R@10 MRR@10) and MRR@10 per tag, p95 ms")
    print(head + "   pooled R@1  R@10   MRR   " + " ".join(f"{t[:10]:>10}" for t in tags) + "   p95   lines/result")
    for emb in embedders:
        for v in variants:
            sel = [r for r in rows if r["embedder"] == emb and r["variant"] == v]
            if not sel:
                continue
            cells = []
            for c in corpora:
                m = pooled([r for r in sel if r["corpus"] == c])
                cells.append(f"{m['R@10']:.3f} / {m['MRR@10']:.3f}" if m else "-")
            m = pooled(sel)
            by_tag = [pooled([r for r in sel if r["tag"] == t])["MRR@10"] for t in tags]
            lines = statistics.fmean(min(200, x["end_line"] - x["start_line"] + 1) for r in sel for x in r["returned"])
            p95 = statistics.quantiles([r["ms"] for r in sel], n=20)[-1] if len(sel) > 1 else sel[0]["ms"]
            print(f"{emb[:12]:<12} {v[:22]:<22} " + " ".join(f"{c:>17}" for c in cells)
                  + f"   {m['R@1']:.3f} {m['R@10']:.3f} {m['MRR@10']:.3f}   "
                  + " ".join(f"{x:>10.3f}" for x in by_tag) + f"   {p95:.0f}   {lines:.0f}")


if __name__ == "__main__":
    sys.exit(main())
