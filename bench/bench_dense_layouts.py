"""What Qdrant Edge offers the dense leg against the exact scan, on a filled shard (issue 18, item 3).

  python bench/bench_dense_layouts.py SHARD_DIR --work DIR [--json out.json]

SHARD_DIR is a filled, settled-or-not Edge shard (``.probe/store/chunks_embedded`` of an index that
``bench_same_questions.py prepare --dense`` or ``bench_disk.py --fill`` made). Each layout works on
copies in ``--work`` (the original is only read) and reports the dense leg's CPU p50 for 100
neighbours (40 random unit queries, no payloads) and the store's allocated size once optimized:

* ``quantized``: the shard with binary (1 bit) quantization, optimized: whether an exact scan of a
  plain segment reads the quantized vectors (it did not: same CPU, recall 1.0);
* ``hnsw-f32`` / ``hnsw-u8``: the shard indexed with an HNSW graph (m 16), which also writes the
  BM25 inverted index beside the sparse vectors, in float32 or ``Uint8`` weights;
* ``main-settled`` / ``main-lean``: the shard optimized with its log rolled, as the idle owner
  leaves it, and the same with its dense vectors removed (``delete_vector_name``);
* ``dense-wal`` / ``dense-nowal``: the dense vectors alone in a second, payload-less shard with an
  HNSW graph (m 16), with its own log or with ``wal_enabled=False``.

Random vectors stand in for most of a bench monorepo's chunks, so graph sizes and recall are those
of vectors without neighbourhoods; ``docs/benchmarks.md``, "The same questions measured alone; what
Edge 0.9 allows the dense leg", has the figures and their real-vector counterparts.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import qdrant_edge as qe  # noqa: E402

from probe_core.storage import edge as E  # noqa: E402
from probe_core.storage.edge_wal import roll_wal  # noqa: E402


def allocated_mb(path: Path) -> float:
    return int(subprocess.check_output(["du", "-sk", "--block-size=1000", str(path)]).split()[0]) / 1000


def parts_mb(shard: Path) -> dict[str, float]:
    """Allocated MB of each part of the shard's segments, summed over segments, and its log."""
    out: dict[str, float] = {}
    for part in sorted(shard.glob("segments/*/*")):
        out[part.name] = round(out.get(part.name, 0.0) + allocated_mb(part), 2)
    if (shard / "wal").exists():
        out["wal"] = allocated_mb(shard / "wal")
    return out


def copy(src: Path, dst: Path) -> Path:
    shutil.rmtree(dst, ignore_errors=True)
    subprocess.check_call(["cp", "-a", "--sparse=always", str(src), str(dst)])
    return dst


def queries(n: int = 40) -> list[list[float]]:
    rng = np.random.default_rng(2)
    return [(v / np.linalg.norm(v)).astype(np.float32).tolist() for v in rng.standard_normal((n, 384))]


def dense_p50(shard: qe.EdgeShard, params: qe.SearchParams, qv: list[list[float]]) -> tuple[float, list[list[str]]]:
    times, ids = [], []
    for q in qv:
        c = time.process_time()
        hits = shard.query(qe.QueryRequest(limit=100, query=qe.Query.Nearest(q, using=E.DENSE), params=params,
                                           with_payload=False))
        times.append((time.process_time() - c) * 1000)
        ids.append([str(h.id) for h in hits])
    return round(statistics.median(times), 2), ids


def recall(exact: list[list[str]], got: list[list[str]], k: int) -> float:
    return round(float(np.mean([len(set(a[:k]) & set(b[:k])) / k for a, b in zip(exact, got)])), 3)


def config(base: qe.EdgeConfig, **changes) -> qe.EdgeConfig:
    fields = dict(vectors=base.vectors, sparse_vectors=base.sparse_vectors, id_tracker_memory=base.id_tracker_memory)
    return qe.EdgeConfig(**{**fields, **changes})


def indexed_layouts(src: Path, work: Path, qv: list[list[float]], exact: list[list[str]]) -> dict:
    base = E.EdgeStore._config(384)
    sparse = {"hnsw-f32": None, "hnsw-u8": qe.VectorStorageDatatype.Uint8}
    layouts = {"quantized": config(base, quantization_config=qe.BinaryQuantizationConfig(always_ram=True),
                                   optimizers=qe.EdgeOptimizersConfig(indexing_threshold=0))}
    for name, datatype in sparse.items():
        params = qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf, memory=E.SPARSE_INDEX_MEMORY, datatype=datatype)
        layouts[name] = config(base, sparse_vectors={E.SPARSE: params},
                               hnsw_config=qe.HnswIndexConfig(m=16, ef_construct=100, full_scan_threshold=10),
                               optimizers=qe.EdgeOptimizersConfig(indexing_threshold=1000))
    out = {}
    for name, cfg in layouts.items():
        dst = copy(src, work / name)
        shard = qe.EdgeShard.load(str(dst), cfg)
        c = time.process_time()
        shard.optimize()
        row = {"optimize_cpu_s": round(time.process_time() - c, 1)}
        params = (qe.SearchParams(exact=True, quantization=qe.QuantizationSearchParams(ignore=False, rescore=True,
                                                                                      oversampling=2.0))
                  if name == "quantized" else qe.SearchParams(hnsw_ef=256))
        row["dense_cpu_p50_ms"], got = dense_p50(shard, params, qv)
        row["recall@10"] = recall(exact, got, 10)
        shard.close()
        row["mb"], row["parts"] = allocated_mb(dst), parts_mb(dst)
        out[name] = row
        print(name, json.dumps(row), flush=True)
        shutil.rmtree(dst)
    return out


def main_shard(src: Path, work: Path) -> dict:
    out = {}
    for name, lean in (("main-settled", False), ("main-lean", True)):
        dst = copy(src, work / name)
        shard = qe.EdgeShard.load(str(dst))
        if lean:
            shard.update(qe.UpdateOperation.delete_vector_name(E.DENSE))
        shard.optimize()
        shard.flush()
        roll_wal(shard, dst / "wal")
        shard.close()
        out[name] = {"mb": allocated_mb(dst), "parts": parts_mb(dst)}
        print(name, json.dumps(out[name]), flush=True)
        shutil.rmtree(dst)
    return out


def dense_shard(src: Path, work: Path, qv: list[list[float]], exact: list[list[str]], wal: bool) -> dict:
    dst = work / ("dense-wal" if wal else "dense-nowal")
    shutil.rmtree(dst, ignore_errors=True)
    params = qe.EdgeVectorParams(size=384, distance=qe.Distance.Cosine, datatype=qe.VectorStorageDatatype.Float16)
    cfg = qe.EdgeConfig(vectors={E.DENSE: params}, wal_enabled=wal, id_tracker_memory=E.ID_TRACKER_MEMORY,
                        hnsw_config=qe.HnswIndexConfig(m=16, ef_construct=100, full_scan_threshold=10),
                        optimizers=qe.EdgeOptimizersConfig(indexing_threshold=1000))
    shard, source = qe.EdgeShard.create(str(dst), cfg), qe.EdgeShard.load(str(src))
    offset, points = None, 0
    while True:
        pts, offset = source.scroll(qe.ScrollRequest(offset=offset, limit=2000, with_payload=False, with_vector=True))
        batch = [qe.Point(p.id, {E.DENSE: p.vector[E.DENSE]}) for p in pts
                 if isinstance(p.vector, dict) and p.vector.get(E.DENSE) is not None]
        if batch:
            shard.update(qe.UpdateOperation.upsert_points(batch))
            points += len(batch)
        if offset is None:
            break
    source.close()
    shard.flush()
    c = time.process_time()
    shard.optimize()
    row = {"points": points, "optimize_cpu_s": round(time.process_time() - c, 1)}
    if wal:
        roll_wal(shard, dst / "wal")
    row["exact_cpu_p50_ms"], _ = dense_p50(shard, E.EXACT, qv)
    row["dense_cpu_p50_ms"], got = dense_p50(shard, qe.SearchParams(hnsw_ef=256), qv)
    row["recall@10"] = recall(exact, got, 10)
    shard.close()
    row["mb"], row["parts"] = allocated_mb(dst), parts_mb(dst)
    print(dst.name, json.dumps(row), flush=True)
    shutil.rmtree(dst)
    return row


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("shard", type=Path, help="a filled Edge shard directory (read only)")
    ap.add_argument("--work", type=Path, required=True, help="where the copies go (a few times the shard's size)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    src = copy(args.shard, args.work / "source")  # the original stays as it was (a load may rewrite its config)
    qv = queries()
    shard = qe.EdgeShard.load(str(src))
    exact_ms, exact = dense_p50(shard, E.EXACT, qv)
    shard.close()
    result = {"shard": str(args.shard), "exact_cpu_p50_ms": exact_ms, "mb": allocated_mb(src)}
    print("exact", json.dumps(result), flush=True)
    result["indexed"] = indexed_layouts(src, args.work, qv, exact)
    result["main"] = main_shard(src, args.work)
    result["dense_shard"] = {wal: dense_shard(src, args.work, qv, exact, wal == "wal") for wal in ("nowal", "wal")}
    shutil.rmtree(src)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
