"""The dense list's approximate (HNSW) search against an exact one on a large shard: recall, time.

  python bench/bench_dense_recall.py --tree INDEXED_COPY [--optimize] [--json out.json]
  python bench/bench_dense_recall.py --texts TEXTS.jsonl.xz --work DIR [--embed-s 240] [--extra V.npz] [--json out.json]
  python bench/bench_dense_recall.py --tree INDEXED_COPY --dump V.npz

``--tree``: a copy of an indexed tree (never the original: ``--optimize`` rewrites its shard, in
process). The shard is opened directly (no ``Workspace``: nothing fills meanwhile). ``--texts``:
chunk texts (JSON lines ``[point_id, path, text]``, xz) are embedded by the packaged MiniLM in
worker processes for up to ``--embed-s`` seconds, written to a new shard made as Probe makes one
(``EdgeStore``), which is then optimized (Qdrant builds its HNSW graph): real vectors at monorepo
size, for a machine with the cores to embed them (the lent device, ``docs/benchmarks.md``).

Then ``bench_scale.py``'s 40 queries, embedded by the same model, search the dense vectors with
``limit`` = search's prefetch (100), unfiltered and with a language filter, exactly (what the store does) and
through the graph at several ``hnsw_ef`` values (what it could do instead): recall@10 and @100 of each against the
exact list (mean and worst query), how many queries get the very same top 10 and whole list (in
order), and the best-of-3 time per query, p50 / p95.
"""
from __future__ import annotations

import argparse
import json
import lzma
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "bench"))

LIMIT = 100  # search's prefetch_limit at top_k <= 12
EFS = (100, 128, 256, 512)
LANGUAGE_OF = {".py": "python", ".go": "go", ".js": "javascript", ".ts": "typescript", ".html": "html",
               ".md": "markdown", ".txt": "text", ".rst": "rst", ".css": "css", ".json": "json"}


def _embedder(threads: int):
    from probe_core.embedding.onnx_minilm import OnnxMiniLMEmbedder

    return OnnxMiniLMEmbedder(intra_op_threads=threads, batch_size=8)


_worker_model = None


def _embed_part(texts: list[str]):
    global _worker_model
    if _worker_model is None:
        _worker_model = _embedder(1)
    return _worker_model.embed_documents(texts)


def embed_texts(path: Path, seconds: float, workers: int) -> tuple[list[tuple[str, str]], "object"]:
    """(point id, path) and vectors of the texts embedded within ``seconds`` (in file order)."""
    import multiprocessing as mp

    import numpy as np

    rows = [json.loads(line) for line in lzma.open(path, "rt")]
    parts = [rows[s:s + 64] for s in range(0, len(rows), 64)]
    done, vecs, t0 = [], [], time.perf_counter()
    with mp.get_context("spawn").Pool(workers) as pool:
        pending = [pool.apply_async(_embed_part, ([r[2] for r in p],)) for p in parts]
        for part, res in zip(parts, pending):
            left = seconds - (time.perf_counter() - t0)
            if left <= 0:
                break
            try:
                vecs.append(res.get(timeout=left))
            except mp.TimeoutError:
                break
            done += [(r[0], r[1]) for r in part]
        pool.terminate()
    print(f"embedded {len(done)} of {len(rows)} in {time.perf_counter() - t0:.0f} s", flush=True)
    return done, np.concatenate(vecs)


def embedded(args) -> tuple[list[tuple[str, str]], "object"]:
    """The texts' vectors: kept in ``--work``/vectors.npz once embedded (a rerun reuses them), with
    ``--extra``'s (vectors taken from an index: ``dump_vectors``) added."""
    import numpy as np

    saved = args.work / "vectors.npz"
    if saved.exists():
        data = np.load(saved)
        ids, vecs = [tuple(r) for r in data["ids"].tolist()], data["vecs"]
    else:
        ids, vecs = embed_texts(args.texts, args.embed_s, args.workers)
        args.work.mkdir(parents=True, exist_ok=True)
        np.savez(saved, ids=np.array(ids), vecs=vecs)
    if args.extra:
        data = np.load(args.extra)
        seen = {i for i, _ in ids}
        keep = [k for k, (i, _) in enumerate(data["ids"].tolist()) if i not in seen]
        ids = ids + [tuple(data["ids"][k].tolist()) for k in keep]
        vecs = np.concatenate([vecs, data["vecs"][keep]])
    return ids, vecs


def dump_vectors(tree: Path, dest: Path) -> int:
    """The dense vectors an indexed tree holds, with their points' ids and paths, into ``dest``."""
    import numpy as np
    import qdrant_edge as qe

    from probe_core.storage import edge
    from probe_core.storage.protocol import DENSE

    shard_dir = tree / ".probe" / "store" / "chunks_embedded"
    shard = qe.EdgeShard.load(str(shard_dir))
    key = edge._keys_of(shard.info().payload_schema, shard_dir).field("file_path")
    ids, vecs, offset = [], [], None
    while True:
        pts, offset = shard.scroll(qe.ScrollRequest(offset=offset, limit=1000, with_payload=[key], with_vector=[DENSE],
                                                    filter=qe.Filter(must=[qe.HasVectorCondition(DENSE)])))
        for p in pts:
            ids.append((str(p.id), (p.payload or {}).get(key, "")))
            vecs.append(np.asarray(p.vector[DENSE], dtype=np.float32))
        if offset is None:
            break
    shard.close()
    np.savez(dest, ids=np.array(ids), vecs=np.stack(vecs))
    return len(ids)


def build_shard(work: Path, ids: list[tuple[str, str]], vecs) -> Path:
    """A new shard made as Probe makes one, holding these vectors, optimized."""
    from probe_core.storage.edge import EdgeStore
    from probe_core.sparse import SparseVec
    from probe_core.storage.protocol import StorePoint

    import shutil

    shutil.rmtree(work / "store", ignore_errors=True)
    store = EdgeStore(work / "store", "chunks_embedded")
    store.ensure_collection(vecs.shape[1])
    for s in range(0, len(ids), 1000):
        store.upsert([StorePoint(id=pid, dense=v, sparse=SparseVec([1], [1.0]),
                                 payload={"file_path": path, "language": LANGUAGE_OF.get(Path(path).suffix, "other"),
                                          "chunk_kind": "code"})
                      for (pid, path), v in zip(ids[s:s + 1000], vecs[s:s + 1000])])
    t = time.perf_counter()
    store.optimize()
    print(f"optimized in {time.perf_counter() - t:.0f} s", flush=True)
    store.close()
    return work / "store"


def query_vectors(threads: int):
    import numpy as np

    from bench_scale import QUERIES

    model = _embedder(threads)
    return np.stack([model.embed_query(q) for q in QUERIES])


def _search(shard, vec, params, flt, reps: int = 3) -> tuple[list[str], float]:
    import qdrant_edge as qe

    from probe_core.storage.protocol import DENSE

    best, ids = 1e9, []
    for _ in range(reps):
        t = time.perf_counter()
        pts = shard.query_batch(qe.QueryBatchRequest([qe.QueryRequest(
            limit=LIMIT, query=qe.Query.Nearest([float(x) for x in vec], using=DENSE), filter=flt,
            params=params, with_payload=True)]))[0]
        best = min(best, (time.perf_counter() - t) * 1000)
        ids = [str(p.id) for p in pts]
    return ids, best


def dense_indexes(shard_dir: Path) -> list[str]:
    """Each segment's dense index type (``plain``: scanned whole; ``hnsw``: a graph)."""
    return sorted(json.loads(seg.read_text())["config"]["vector_data"]["dense"]["index"]["type"]
                  for seg in (shard_dir / "segments").glob("*/segment.json"))


def compare(shard_dir: Path, vecs) -> dict:
    """Recall and time of each search setting against the exact list, per filter."""
    import qdrant_edge as qe

    from probe_core.storage import edge
    from probe_core.storage.protocol import StoreFilter

    shard = qe.EdgeShard.load(str(shard_dir))
    keys = edge._keys_of(shard.info().payload_schema, shard_dir)
    settings = {"exact": qe.SearchParams(exact=True), **{f"hnsw_ef={ef}": qe.SearchParams(hnsw_ef=ef) for ef in EFS}}
    filters = {"none": None, "language=go": edge._filter(StoreFilter(languages=["go"]), keys),
               "language=python": edge._filter(StoreFilter(languages=["python"]), keys)}
    out: dict = {"points": shard.info().points_count, "dense_indexes": dense_indexes(shard_dir)}
    print(out, flush=True)
    for fname, flt in filters.items():
        for v in vecs[:3]:  # page cache and the engine's caches
            _search(shard, v, settings["exact"], flt, 1)
        exact = [_search(shard, v, settings["exact"], flt) for v in vecs]
        for sname, params in settings.items():
            got = exact if sname == "exact" else [_search(shard, v, params, flt) for v in vecs]
            r10 = [len(set(g[0][:10]) & set(e[0][:10])) / max(1, len(e[0][:10])) for g, e in zip(got, exact)]
            r100 = [len(set(g[0]) & set(e[0])) / max(1, len(e[0])) for g, e in zip(got, exact)]
            ms = sorted(g[1] for g in got)
            row = {"recall10": round(statistics.mean(r10), 4), "recall10_min": round(min(r10), 2),
                   "recall100": round(statistics.mean(r100), 4), "recall100_min": round(min(r100), 2),
                   "same_top10": sum(g[0][:10] == e[0][:10] for g, e in zip(got, exact)),
                   "same_list": sum(g[0] == e[0] for g, e in zip(got, exact)),
                   "p50_ms": round(statistics.median(ms), 2), "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 2)}
            out[f"{fname} {sname}"] = row
            print(f"{fname:16s} {sname:14s} {json.dumps(row)}", flush=True)
    shard.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", type=Path, help="a copy of an indexed tree")
    ap.add_argument("--optimize", action="store_true", help="optimize the copy's shard first (in process)")
    ap.add_argument("--texts", type=Path, help="chunk texts to embed into a new shard")
    ap.add_argument("--work", type=Path, help="where --texts builds its shard")
    ap.add_argument("--embed-s", type=float, default=240.0)
    ap.add_argument("--extra", type=Path, help="vectors to add to the texts' (made by --dump)")
    ap.add_argument("--dump", type=Path, help="write --tree's dense vectors here (for --extra) and stop")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    out: dict = {"load_average": os.getloadavg()[0], "cpus": os.cpu_count()}
    if args.texts:
        ids, vecs = embedded(args)
        shard_dir = build_shard(args.work, ids, vecs)
        out["embedded"] = len(ids)
    elif args.tree and args.dump:
        print(dump_vectors(args.tree, args.dump), "vectors")
        return 0
    elif args.tree:
        shard_dir = args.tree / ".probe" / "store" / "chunks_embedded"
        if args.optimize:
            import qdrant_edge as qe

            shard = qe.EdgeShard.load(str(shard_dir))
            t = time.perf_counter()
            out["optimized"] = bool(shard.optimize())
            out["optimize_s"] = round(time.perf_counter() - t, 1)
            shard.close()
    else:
        ap.error("--tree or --texts")
    out.update(compare(shard_dir, query_vectors(min(4, args.workers))))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
