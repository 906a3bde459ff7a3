"""The same questions on a small repository and on a monorepo holding it (issue 18, item 3's ratio).

The issue asks that search p50 on a monorepo be at most 1.5x that on a 40k-line repository. Asked
with ``bench_scale.py``'s 40 queries, the small tree (Werkzeug) holds no answer to most of them and
does less work per query than the monorepo does; this bench asks the SAME questions of both: the
dev set's search queries, each corpus indexed alone, and the same queries in a copy of the scale
monorepo that holds the four corpora under ``dev/<corpus>/`` (``bench_dev_in_monorepo.build``),
asked of the whole tree and within ``dev/<corpus>/**`` (``include_globs``).

  python bench/bench_same_questions.py prepare --work /tmp/h-ratio [--dense]
  python bench/bench_same_questions.py measure --work /tmp/h-ratio --kind lex|dense [--rounds 2] \\
      [--queries /work/shared/eval/dev/queries.jsonl] [--code /work/main] [--json out.json]

``prepare`` copies the trees (never indexes the pristine ones) and indexes them lexically; with
``--dense`` it also makes filled copies: each corpus with its real vectors (``CachedEmbedder``, kept in
``WORK/vectors.npz``), the monorepo through the indexer's own ``fill_dense`` with the corpora's chunks
given those same vectors (their text read without the ``dev/<corpus>/`` of the header) and every
other chunk a random unit vector (``bench_disk.RandomEmbedder``: the real storage path and bytes;
the dense leg is an exact scan, so its cost is the point count's, not the values'). ``measure``
runs ``bench_search_stages.py`` in a fresh process per corpus and tree, once (``fresh``) and least
of 3 (``warm``), alternating small and monorepo, and prints CPU and ``took_ms`` p50 / p95 per query
set with the ratios monorepo / alone.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

CORPORA = ("werkzeug", "chi", "serde_json", "mobx")
QUERIES = ROOT.parent / "shared/eval/dev/queries.jsonl"  # /work/main -> /work/shared; a worktree passes --queries
SETS = {"alone": (None, None), "tree": ("mono", None), "scoped": ("mono", "dev")}


class RoutedEmbedder:
    """A dev corpus's chunk gets the vector it has when the corpus is indexed alone; any other chunk
    a random unit vector."""

    def __init__(self, real, random):
        self._real, self._random = real, random
        self.model_id, self.dimensions = real.model_id, real.dimensions

    def embed_documents(self, texts: list[str]):
        import numpy as np

        out = self._random.embed_documents(texts)
        dev = [k for k, t in enumerate(texts) if t.startswith("dev/")]
        if dev:  # "dev/<corpus>/src/x.py · name\n..." -> "src/x.py · name\n..."
            out[dev] = self._real.embed_documents([texts[k].split("/", 2)[2] for k in dev])
        return np.asarray(out, dtype=np.float32)

    def embed_query(self, text: str, instruction: str | None = None):
        return self._real.embed_query(text, instruction)


def prepare(work: Path, dense: bool, scale_tree: Path, corpus_root: Path) -> None:
    from bench_dev_in_monorepo import build
    from bench_disk import RandomEmbedder
    from bench_partial_fill import CachedEmbedder
    from probe_core import Workspace, index_workspace
    from probe_core.indexing.indexer import fill_dense

    def index(tree: Path, fill=None) -> None:
        t0 = time.perf_counter()
        ws = Workspace.open(tree)
        index_workspace(ws, dense=False)
        if fill is not None:
            ws.set_embedder(fill(ws))
            fill_dense(ws, batch=256)
        print(f"{tree}: {ws.manifest.counts()}, {time.perf_counter() - t0:.0f} s", flush=True)
        ws.close()

    for corpus in CORPORA:
        if not (work / "alone-lex" / corpus).exists():
            shutil.copytree(corpus_root / corpus, work / "alone-lex" / corpus,
                            ignore=shutil.ignore_patterns(".probe"), symlinks=True)
        index(work / "alone-lex" / corpus)
    if not (work / "mono-lex").exists():
        build(scale_tree, corpus_root, sorted(CORPORA), work / "mono-lex")
    index(work / "mono-lex")
    if not dense:
        return
    cache: list = []

    def real(ws):
        if not cache:
            cache.append(CachedEmbedder(ws.embedder, work / "vectors.npz"))
        return cache[0]
    for corpus in CORPORA:
        if not (work / "alone-dense" / corpus).exists():
            shutil.copytree(work / "alone-lex" / corpus, work / "alone-dense" / corpus, symlinks=True)
        index(work / "alone-dense" / corpus, real)
        cache[0].save()
    if not (work / "mono-dense").exists():
        shutil.copytree(work / "mono-lex", work / "mono-dense", symlinks=True)
    index(work / "mono-dense", lambda ws: RoutedEmbedder(cache[0], RandomEmbedder(cache[0].model_id, cache[0].dimensions)))
    print(f"embedded {cache[0].computed} texts with the real model", flush=True)


def run_one(work: Path, kind: str, where: str, corpus: str, repeat: int, queries: Path, code: Path | None) -> dict:
    tree_name, scope = SETS[where]
    tree = work / f"{tree_name or 'alone'}-{kind}" / ("" if tree_name else corpus)
    out = work / "runs" / f"{kind}-{where}-{corpus}-{repeat}-{code.name if code else 'this'}.json"
    out.parent.mkdir(exist_ok=True)
    cmd = [sys.executable, str(ROOT / "bench/bench_search_stages.py"), "--tree", str(tree), "--queries", str(queries),
           "--corpus", corpus, "--repeat", str(repeat), "--json", str(out)] + (["--scope", scope] if scope else [])
    cmd += ["--code", str(code)] if code else []
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return json.loads(out.read_text())


def summary(rows: list[dict]) -> dict:
    from bench_search_stages import percentile

    cpu, took = [r["cpu_ms"] for r in rows], [r["took_ms"] for r in rows]
    stages = ("store", "exact", "graph", "following", "fuse", "priors", "expand", "vocabulary", "embed")
    return {"n": len(rows), "cpu_p50": statistics.median(cpu), "cpu_p95": percentile(cpu, 95),
            "took_p50": statistics.median(took), "took_p95": percentile(took, 95),
            "stages": {s: round(statistics.fmean(r.get(s, 0.0) for r in rows), 2) for s in stages}}


def measure(work: Path, kind: str, rounds: int, queries: Path, code: Path | None = None) -> dict:
    """Per round, mode and corpus: alone, then the monorepo tree-wide, then scoped (fresh processes)."""
    result: dict = {"kind": kind, "code": str(code or ROOT), "rounds": []}
    for r in range(rounds):
        per: dict = {}
        for mode, repeat in (("fresh", 1), ("warm", 3)):
            for corpus in CORPORA:
                for where in SETS:
                    load = os.getloadavg()[0]
                    got = run_one(work, kind, where, corpus, repeat, queries, code)
                    per.setdefault((mode, where), {})[corpus] = (list(got["per_query"].values()), load, got)
        result["rounds"].append(table(per, r, result["code"]))
    return result


def table(per: dict, r: int, code: str) -> dict:
    out: dict = {}
    for (mode, where), by_corpus in per.items():
        for name in (*CORPORA, "all"):
            rows = sum((v[0] for c, v in by_corpus.items() if name in ("all", c)), [])
            loads = [v[1] for c, v in by_corpus.items() if name in ("all", c)]
            out.setdefault(mode, {}).setdefault(name, {})[where] = {**summary(rows), "load": [min(loads), max(loads)]}
    print(f"\nround {r + 1} ({code}): CPU p50 / p95 (took_ms p50 / p95) ms; ratio = monorepo / alone, CPU p50 (took p50)")
    for mode, sets in out.items():
        for name, cell in sets.items():
            a = cell["alone"]
            parts = [f"{w} {c['cpu_p50']:.1f} / {c['cpu_p95']:.1f} ({c['took_p50']:.1f} / {c['took_p95']:.1f})"
                     for w, c in cell.items()]
            ratios = [f"{w}/alone {c['cpu_p50'] / a['cpu_p50']:.2f} ({c['took_p50'] / a['took_p50']:.2f})"
                      for w, c in cell.items() if w != "alone"]
            load = min(c["load"][0] for c in cell.values()), max(c["load"][1] for c in cell.values())
            print(f"{mode:<5} {name:<10} n={a['n']:<3} load {load[0]:.1f}-{load[1]:.1f} | " + " | ".join(parts + ratios))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("step", choices=("prepare", "measure"))
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--dense", action="store_true", help="prepare: also the filled copies")
    ap.add_argument("--kind", choices=("lex", "dense"), default="lex")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--queries", type=Path, default=QUERIES, help="the dev set's queries.jsonl")
    ap.add_argument("--tree", type=Path, default=Path("/tmp/probe-scale/monorepo"), help="prepare: the scale monorepo")
    ap.add_argument("--corpus-root", type=Path, default=Path("/tmp/probe-dev"), help="prepare: the dev corpora")
    ap.add_argument("--code", type=Path, help="measure: a checkout whose probe_core to run (default: this one)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    if args.step == "prepare":
        prepare(args.work, args.dense, args.tree, args.corpus_root)
        return 0
    out = measure(args.work, args.kind, args.rounds, args.queries, args.code)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
