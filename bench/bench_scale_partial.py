"""A monorepo's answers at a frozen partial dense coverage, against its lexical-only answers.

  uv run python bench/bench_scale_partial.py [--lexical /tmp/mono-lex] --partial /tmp/mono-fill [--json out.json]

``--lexical``: a copy of a ``bench_scale.py`` tree indexed lexically (0 % coverage; without it, the
partial index answers with its dense list left out, which is the same ranking); ``--partial``:
another copy of the same tree whose dense fill ran for a while and was stopped (e.g. by
``bench_fill_yield.py --indexed``). Searches run in process, so nothing fills the index further. The scale trees have no relevance judgements, so this reports
what a reader checks by eye: each query's top results at 0 %, at the partial coverage with Probe's
fusion (``stand-in-best``), with the BM25 stand-in it replaced (``stand-in``), and with the dense list at full weight as before issue 18 (``none``), the
number of files each top 10 shares with the lexical top 10. The issue's example: at 0.1 % coverage ``dsolve`` returned
``.ci/durations.json`` and ``.mailmap`` first; here a first hit outside source for a code query
is what to look for.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from report import emit  # noqa: E402  (bench/ is on sys.path when run as a script)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

QUERIES = ["dsolve", "solve a differential equation", "sympify", "parse a time duration string",
           "how are database migrations applied", "tls handshake", "csrf token check", "matrix determinant",
           "get_object_or_404", "gzip compression writer", "simplify a trigonometric expression",
           "sort a slice with a less function"]


VARIANTS = ("stand-in-best", "stand-in", "none")


def answers(tree: Path, variant: str) -> tuple[dict[str, list[str]], float]:
    """Each query's top 10 (``path:line``) under ``variant`` ("lexical": no dense list)."""
    from bench_partial_fill import variant as fusion
    from probe_core import Workspace
    from probe_core.retrieval import search as S

    ws = Workspace.open(tree)
    counts = ws.manifest.counts()
    out = {}
    saved = S.query_vector
    if variant == "lexical":
        S.query_vector = lambda *args, **kw: (None, None)
    try:
        with fusion(ws, "stand-in-best" if variant == "lexical" else variant):
            for q in QUERIES:
                S._cache._data.clear()  # the variants change no cache key
                out[q] = [f"{r.path}:{r.start_line}" for r in S.search(ws, q, top_k=10).results]
    finally:
        S.query_vector = saved
        ws.close()
    return out, counts["chunks_dense"] / counts["chunks"]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lexical", type=Path)
    ap.add_argument("--partial", type=Path, required=True)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    os.environ.setdefault("PROBE_EMBEDDER", "minilm")
    lexical, _ = answers(args.lexical, "stand-in-best") if args.lexical else answers(args.partial, "lexical")
    rows, coverage = {}, 0.0
    for name in VARIANTS:
        got, coverage = answers(args.partial, name)
        rows[name] = got
    out = {"coverage": round(coverage, 4), "queries": {}}
    for q in QUERIES:
        lex10 = {a.split(":")[0] for a in lexical[q]}
        out["queries"][q] = {
            "lexical_top5": lexical[q][:5],
            **{f"{name}_top5": rows[name][q][:5] for name in rows},
            **{f"{name}_overlap10": len(lex10 & {a.split(":")[0] for a in rows[name][q]}) for name in rows},
            # where the lexical answer's first hit went
            **{f"{name}_lexical_first_at": (rows[name][q].index(lexical[q][0]) + 1 if lexical[q] and lexical[q][0]
                                            in rows[name][q] else None) for name in rows},
        }
    return emit(out, args.json)


if __name__ == "__main__":
    sys.exit(main())
