"""Answers while dense vectors fill: the dev set scored with the fill frozen at 0 %, 10 %, 50 %, 100 %.

Each corpus is copied, indexed lexically, then its dense queue is filled in steps (the indexer's own
``fill_dense``, in its own fill order) and stopped at each coverage level; every search query of the
dev set is answered at each level the way ``probe mcp`` answers it (``eval_retrieval.mcp_answer``)
and scored with the official scorer's metric functions. 0 % is the lexical-only score: the bar is
that every level scores at least that, and that the score rises with coverage.

  uv run python bench/bench_partial_fill.py --corpus-root /tmp/probe-dev-copy \\
      [--variant stand-in-best --variant stand-in ...] [--order fill|arrival] [--json out.json]

Variants are ways of fusing a partly filled dense list (the ablations of ``docs/benchmarks.md``,
"Answers while dense vectors fill"); ``stand-in-best`` is what Probe does. Embeddings are cached by text
under ``--work`` (``vectors.npz``), so a second run, another variant or another fill order costs no
embedding.
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import shutil
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from eval_retrieval import load_scorer, mcp_answer  # noqa: E402

LEVELS = (0, 10, 50, 100)


class CachedEmbedder:
    """The workspace's embedder, remembering every vector by text (kept across runs in a file)."""

    def __init__(self, inner, path: Path):
        self._inner, self._path, self._memo = inner, path, {}
        if path.exists():
            data = np.load(path)
            self._memo = dict(zip(data["keys"].tolist(), data["vectors"]))
        self.computed = 0

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def embed_documents(self, texts):
        keys = [hashlib.sha1(t.encode("utf-8", "surrogatepass")).hexdigest() for t in texts]
        todo = [k for k in dict.fromkeys(keys) if k not in self._memo]
        if todo:
            first = {k: t for k, t in zip(keys, texts)}
            for k, v in zip(todo, self._inner.embed_documents([first[k] for k in todo])):
                self._memo[k] = v
            self.computed += len(todo)
        return np.stack([self._memo[k] for k in keys]) if keys else np.zeros((0, self._inner.dimensions), np.float32)

    def embed_query(self, text, instruction=None):
        return self.embed_documents([text])[0]

    def save(self) -> None:
        keys = list(self._memo)
        if not keys:  # nothing embedded (a lexical-only level alone)
            return
        np.savez(self._path, keys=np.array(keys), vectors=np.stack([self._memo[k] for k in keys]))


# -- the fusion variants (the ablations) -----------------------------------------------------------

def _term(rank, weight, k):
    from probe_core.retrieval.rank_fusion import rrf_term

    return rrf_term(rank, weight, k)


def _best_lexical(h):
    return min([r for r in (h.bm25_rank, *h.extra_ranks.values()) if r] or [0]) or None


def _scaled(h, c):
    return math.ceil(h.dense_rank / c) if h.dense_rank else None


# each: (hit, has a vector, coverage, ranking, the hit's mean lexical term) → its dense term
DENSE_TERMS = {
    # what Probe did before issue 18: the dense list's ranks at full weight, whatever the coverage
    "none": lambda h, emb, c, r, m: _term(h.dense_rank, r.dense_weight, r.rrf_k),
    # the dense list's weight scaled by coverage
    "weight": lambda h, emb, c, r, m: _term(h.dense_rank, r.dense_weight * c, r.rrf_k),
    # a dense rank among the embedded chunks read as the rank it would have among all (rank / coverage)
    "rank-scale": lambda h, emb, c, r, m: _term(_scaled(h, c), r.dense_weight, r.rrf_k),
    # per candidate: no vector → the mean of its lexical terms (BM25, literal, identifier) stands in,
    # which keeps the lexical order among those
    "stand-in-mean": lambda h, emb, c, r, m: _term(h.dense_rank, r.dense_weight, r.rrf_k) if emb else r.dense_weight * m,
    # ...and an embedded candidate's dense rank read as rank / coverage
    "stand-in-mean+rank-scale": lambda h, emb, c, r, m: (_term(_scaled(h, c), r.dense_weight, r.rrf_k) if emb
                                                         else r.dense_weight * m),
    # per candidate: no vector → the larger of its BM25 term and its mean lexical term stands in
    "stand-in-max": lambda h, emb, c, r, m: (_term(h.dense_rank, r.dense_weight, r.rrf_k) if emb
                                             else r.dense_weight * max(m, _term(h.bm25_rank, 1.0, r.rrf_k))),
    # per candidate: no vector → its BM25 rank stands in (Probe's choice until the monorepo's `sympify`)
    "stand-in": lambda h, emb, c, r, m: _term(h.dense_rank if emb else h.bm25_rank, r.dense_weight, r.rrf_k),
    # per candidate: no vector → its best lexical rank (BM25, literal, identifier) stands in (Probe's choice)
    "stand-in-best": lambda h, emb, c, r, m: _term(h.dense_rank if emb else _best_lexical(h), r.dense_weight, r.rrf_k),
    # per candidate, and an embedded candidate's dense rank read as rank / coverage
    "stand-in+rank-scale": lambda h, emb, c, r, m: _term(_scaled(h, c) if emb else h.bm25_rank, r.dense_weight, r.rrf_k),
    # per candidate, and the dense ranks weighted by coverage
    "stand-in+weight": lambda h, emb, c, r, m: (_term(h.dense_rank, r.dense_weight * c, r.rrf_k) if emb
                                                else _term(h.bm25_rank, r.dense_weight * c, r.rrf_k)),
}
RESTRICTED = {"among-lexical": "none", "among-lexical+stand-in": "stand-in"}  # + the dense term they use
VARIANTS = (*DENSE_TERMS, *RESTRICTED)


def _among_lexical(store, coverage_of):
    """Wrap ``store.hybrid_query``: below full coverage the dense list ranks only the BM25 candidates
    that have a vector (cosine to the query), and brings none of its own."""
    inner = store.hybrid_query

    def query(hq):
        hits = inner(hq)
        if hq.dense is None or coverage_of() >= 1.0:
            return hits
        hits = [h for h in hits if h.bm25_rank]
        vectors = store.dense_vectors([h.id for h in hits])
        sims = {i: float(np.dot(v, hq.dense)) for i, v in vectors.items()}
        for rank, pid in enumerate(sorted(sims, key=lambda i: -sims[i]), 1):
            next(h for h in hits if h.id == pid).dense_rank = rank
        for h in hits:
            if h.id not in sims:
                h.dense_rank = None
        return hits
    return query


@contextlib.contextmanager
def variant(ws, name: str):
    """Search with the dense term of variant ``name``: ``search.fuse`` is wrapped so each query's
    lists give the variant its arguments (coverage, the candidate's mean lexical term), and
    ``rank_fusion.dense_term`` is the variant's for the length of that call."""
    from probe_core.retrieval import rank_fusion, search

    term = DENSE_TERMS[RESTRICTED.get(name, name)]
    saved_fuse, saved_term, saved_query = search.fuse, rank_fusion.dense_term, ws.store.hybrid_query

    def fuse(hits, extra, ranking, payloads, *, coverage=1.0, without_vector=lambda ids: set()):
        weights = {n: w for n, (_, w) in extra.items()}
        # the lexical lists that ranked anything for this query, by weight: the mean's denominator
        lexical_weight = ranking.sparse_weight + sum(w for ids, w in extra.values() if ids) or 1.0

        def dense_term(h, embedded, r):
            lexical = _term(h.bm25_rank, r.sparse_weight, r.rrf_k) + sum(
                _term(rank, weights[n], r.rrf_k) for n, rank in h.extra_ranks.items())
            return term(h, embedded, coverage, r, lexical / lexical_weight)
        rank_fusion.dense_term = dense_term
        return saved_fuse(hits, extra, ranking, payloads, coverage=coverage, without_vector=without_vector)
    search.fuse = fuse
    if name in RESTRICTED:
        counts = ws.manifest.counts
        ws.store.hybrid_query = _among_lexical(ws.store, lambda: counts()["chunks_dense"] / max(1, counts()["chunks"]))
    try:
        yield
    finally:
        search.fuse, rank_fusion.dense_term = saved_fuse, saved_term
        ws.store.hybrid_query = saved_query


# -- the run ------------------------------------------------------------------------------------

def fill_to(ws, fraction: float) -> float:
    """Embed queued chunks, in the indexer's fill order, until ``fraction`` of all chunks have a
    vector (the indexer's own ``fill_dense``, one batch at a time); returns the coverage reached."""
    from probe_core.indexing.indexer import fill_dense

    man = ws.manifest
    target = math.ceil(fraction * man.counts()["chunks"])
    while (have := man.counts()["chunks_dense"]) < target and man.pending_dense(1):
        calls = iter((False, True))
        fill_dense(ws, batch=min(64, target - have), should_stop=lambda: next(calls))
    c = man.counts()
    return c["chunks_dense"] / c["chunks"]


def run_corpus(corpus: str, src: Path, work: Path, queries: list[dict], variants: list[str], order: str,
               scorer, levels) -> list[dict]:
    from probe_core import Workspace, index_workspace

    dst = work / order / corpus
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".probe"))
    ws = Workspace.open(dst)
    emb = CachedEmbedder(ws.embedder, work / f"vectors-{corpus}.npz")
    ws.set_embedder(emb)
    index_workspace(ws, dense=False)
    if order == "arrival":  # the queue as Probe served it before fill order: as files were scanned
        with ws.manifest.transaction() as db:
            db.execute("UPDATE pending_dense SET fill_order=0")
    rows = []
    for level in levels:
        t0 = time.perf_counter()
        coverage = fill_to(ws, level / 100)
        fill_s = time.perf_counter() - t0
        for name in (variants if 0 < coverage < 1 else variants[:1]):  # at 0 and 100 % they all agree
            with variant(ws, name):
                for q in queries:
                    ws.touch()  # no answer from the search cache of another variant
                    out = mcp_answer(ws, q["query"], None)
                    res = [{"path": r["path"], "start_line": r["start_line"], "end_line": r["end_line"],
                            "kind": r["chunk_kind"]} for r in out["results"]]
                    rows.append({"corpus": corpus, "level": level, "coverage": coverage, "variant": name,
                                 "order": order, "id": q["id"], "tag": q["tags"][0], "fill_s": fill_s,
                                 "metrics": scorer.score_search(res, q["gold"])})
        print(f"  {corpus} {level:>3} % (coverage {coverage:.3f}, fill {fill_s:.0f} s, "
              f"{emb.computed} embedded so far)", flush=True)
    emb.save()
    ws.close()
    return rows


def report(rows: list[dict], variants: list[str], levels, corpora: list[str]) -> bool:
    """Print R@10 / MRR@10 per variant and level (pooled, then per corpus); True when the first
    variant, pooled over the dev set, never scores below lexical-only (0 %) and never falls as
    coverage rises. Per corpus the same is reported, not required: one corpus's 20 queries move by
    a query's worth, and at full coverage serde_json's MRR@10 is below its lexical-only one."""
    def mean(sel, m):
        return statistics.fmean(r["metrics"][m] for r in sel) if sel else float("nan")

    def at(name, level, corpus=None):
        name = name if 0 < level < 100 else variants[0]
        return [r for r in rows if r["variant"] == name and r["level"] == level and (corpus is None or r["corpus"] == corpus)]

    def table(corpus):
        for name in variants:
            cells = [f"{mean(at(name, lv, corpus), 'R@10'):.3f} / {mean(at(name, lv, corpus), 'MRR@10'):.3f}"
                     for lv in levels]
            print(f"{name:<24}" + "".join(f"{c:>16}" for c in cells))

    print("\nR@10 / MRR@10 pooled over the dev set; per corpus below")
    print(f"{'variant':<24}" + "".join(f"{f'{lv} %':>16}" for lv in levels))
    table(None)
    for corpus in corpora:
        print(f"\n{corpus}")
        table(corpus)
    ok = True
    for corpus in [None, *corpora]:
        for m in ("R@10", "MRR@10"):
            series = [mean(at(variants[0], lv, corpus), m) for lv in levels]
            if any(b < series[0] - 1e-9 for b in series[1:]) or any(b < a - 1e-9 for a, b in zip(series, series[1:])):
                ok = ok and corpus is not None
                print(f"{'FAIL' if corpus is None else 'note'} {variants[0]} {corpus or 'pooled'} {m}: "
                      + " → ".join(f"{x:.3f}" for x in series))
    print(f"\n{variants[0]}, pooled: {'never below lexical-only and rising with coverage' if ok else 'bar missed'}")
    return ok


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus-root", type=Path, required=True, help="the dev corpora (copied, never indexed in place)")
    ap.add_argument("--queries", type=Path, default=ROOT.parent / "shared/eval/dev/queries.jsonl")
    ap.add_argument("--scorer", type=Path, default=ROOT.parent / "shared/eval/score.py")
    ap.add_argument("--work", type=Path, default=Path("/tmp/probe-partial-fill"))
    ap.add_argument("--variant", action="append", choices=VARIANTS,
                    help="fusion of a partial dense list (repeatable; the first is checked against the bar)")
    ap.add_argument("--order", choices=("fill", "arrival"), default="fill", help="the queue's order")
    ap.add_argument("--levels", default=",".join(map(str, LEVELS)))
    ap.add_argument("--corpora", help="comma-separated subset")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    scorer = load_scorer(args.scorer)
    variants = args.variant or ["stand-in-best"]
    levels = [int(x) for x in args.levels.split(",")]
    queries = [json.loads(line) for line in args.queries.read_text().splitlines() if line.strip()]
    queries = [q for q in queries if q["kind"] == "search"]
    corpora = sorted({q["corpus"] for q in queries})
    if args.corpora:
        corpora = [c for c in corpora if c in args.corpora.split(",")]
    args.work.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    for corpus in corpora:
        rows += run_corpus(corpus, args.corpus_root / corpus, args.work, [q for q in queries if q["corpus"] == corpus],
                           variants, args.order, scorer, levels)
    ok = report(rows, variants, levels, corpora)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
