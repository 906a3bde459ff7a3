"""What `.probe/` holds, by component, lexical-only and at full dense coverage (issue 18, item 4).

  python bench/bench_disk.py WORK_DIR [--code DIR] [--fill] [--optimize] [--json out.json]

WORK_DIR is a tree ``bench_scale.py measure --work WORK_DIR`` indexed (lexical-only). ``--fill``
first gives every queued chunk a dense vector through ``fill_dense`` with a stand-in embedder that
returns random unit vectors: the real storage path and the same bytes per vector as the index's
model, without the hours of CPU a real embedder takes on a million lines (rankings are not what
this measures). ``--optimize`` then runs Qdrant's optimizers on the shard and compacts the manifest, as the idle
owner does after the fill (``storage/edge_optimize.py``, ``storage/manifest_vacuum.py``, the log
cut back to one segment: ``storage/edge_wal.py``): the size a
filled index settles at. Then it prints each part's size, apparent and allocated (``du``: Qdrant
preallocates, and an SQLite file keeps its free pages unless it vacuums), so a before/after table
of two checkouts (``--code``) on copies of one indexed tree compares like with like.
"""
from __future__ import annotations

import argparse
import sqlite3
import sys
import time
from pathlib import Path

from report import emit  # noqa: E402  (bench/ is on sys.path when run as a script)

ROOT = Path(__file__).resolve().parents[1]
STORE_PARTS = {"dense vectors": "vector_storage-dense", "sparse vectors": "vector_storage-bm25",
               "sparse index": "vector_index-bm25", "dense index": "vector_index-dense", "payload": "payload_storage",
               "payload indexes": "payload_index", "wal": "/wal/"}
TABLES = {"graph uses": ("graph_refs", "graph_uses", "graph_names", "sqlite_autoindex_graph_names"),
          "word postings": ("graph_postings", "graph_terms", "sqlite_autoindex_graph_terms", "graph_files"),
          "symbols, edges, imports": ("graph_symbols", "graph_edges", "graph_imports"),
          "dense queue": ("pending", "sqlite_autoindex_pending"),
          "chunks": ("chunks", "sqlite_autoindex_chunks", "paths", "sqlite_autoindex_paths"), "files": ("files", "sqlite_autoindex_files")}


class RandomEmbedder:
    """Random unit vectors under the index's own model id and dimensions."""

    def __init__(self, model_id: str, dimensions: int):
        import numpy as np

        self.model_id, self.dimensions, self._np = model_id, dimensions, np
        self._rng = np.random.default_rng(0)

    def embed_documents(self, texts: list[str]):
        v = self._rng.standard_normal((len(texts), self.dimensions)).astype(self._np.float32)
        return v / self._np.linalg.norm(v, axis=1, keepdims=True)

    def embed_query(self, text: str, instruction: str | None = None):
        return self.embed_documents([text])[0]


def fill(work: Path) -> dict:
    from probe_core import Workspace
    from probe_core.indexing.indexer import fill_dense

    ws = Workspace.open(work)
    man = ws.manifest
    ws.set_embedder(RandomEmbedder(man.get_meta("embedding_model_id") or "random",
                                   int(man.get_meta("embedding_dimensions") or 384)))
    t0 = time.perf_counter()
    n = fill_dense(ws, batch=256)
    out = {"filled": n, "fill_s": round(time.perf_counter() - t0, 1), **man.counts()}
    ws.close()
    return out


def optimize(work: Path) -> dict:
    from probe_core import Workspace

    ws = Workspace.open(work)
    t0 = time.perf_counter()
    changed = ws.store.optimize()
    out = {"optimized": changed, "optimize_s": round(time.perf_counter() - t0, 1)}
    if hasattr(ws.store, "roll_wal"):  # the log cut back to one segment, as the idle owner does
        t0 = time.perf_counter()
        out.update(wal_freed_mb=round(ws.store.roll_wal() / 1e6, 1), wal_roll_s=round(time.perf_counter() - t0, 1))
    ws.close()
    try:  # then the manifest, as the idle owner does after it (code from before that has no such step)
        from probe_core.storage.manifest_vacuum import compact_manifest
    except ImportError:
        return out
    t0 = time.perf_counter()
    saved = compact_manifest(work / ".probe" / "manifest.sqlite")
    out.update(manifest_saved_mb=None if saved is None else round(saved / 1e6, 1),
               compact_s=round(time.perf_counter() - t0, 1))
    return out


def mb(files: list[Path]) -> list[float]:
    """[apparent, allocated] MB of these files."""
    stats = [f.stat() for f in files]
    return [round(sum(s.st_size for s in stats) / 1e6, 1), round(sum(s.st_blocks * 512 for s in stats) / 1e6, 1)]


def sizes(probe: Path) -> dict:
    files = [f for f in probe.rglob("*") if f.is_file()]
    store = [f for f in files if "/store/" in str(f)]
    out: dict = {"probe_dir": mb(files), "store": mb(store)}
    for name, key in STORE_PARTS.items():
        out[f"store {name}"] = mb([f for f in store if key in str(f)])
    out["manifest"] = mb([f for f in files if f.name.startswith("manifest.sqlite")])
    db = sqlite3.connect(f"file:{probe / 'manifest.sqlite'}?mode=ro", uri=True)
    rows = dict(db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall())
    for name, prefixes in TABLES.items():
        out[f"manifest {name}"] = round(sum(v for k, v in rows.items() if k.startswith(prefixes)) / 1e6, 1)
    out["manifest free pages"] = round(db.execute("PRAGMA freelist_count").fetchone()[0]
                                       * db.execute("PRAGMA page_size").fetchone()[0] / 1e6, 1)
    db.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("work", type=Path)
    ap.add_argument("--code", type=Path, help="a checkout whose probe_core to run (default: this one)")
    ap.add_argument("--fill", action="store_true", help="fill every dense vector first (random unit vectors)")
    ap.add_argument("--optimize", action="store_true", help="then optimize the store and compact the manifest, as the idle owner does")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    sys.path.insert(0, str((args.code or ROOT).resolve()))
    out: dict = {"work": str(args.work), "code": str(args.code or ROOT)}
    if args.fill:
        out["fill"] = fill(args.work)
    if args.optimize:
        out["optimize"] = optimize(args.work)
    out["sizes_mb_apparent_allocated"] = sizes(args.work / ".probe")
    return emit(out, args.json)


if __name__ == "__main__":
    sys.exit(main())
