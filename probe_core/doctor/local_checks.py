"""Checks that need nothing running: a real BM25 + fusion round-trip, and disk space."""
from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from .. import sparse
from ..errors import ProbeError
from ..storage.damage import readonly_uri
from ..storage.edge import EdgeStore
from ..storage.protocol import HybridQuery, StorePoint
from .model import Check

G = "engine"
_GB = 1000**3

# Disk the preset's models and images take (safetensors weights + the TEI and reranker images).
# The embedded preset's model ships in the Python package: what it needs is the index itself.
DISK_NEED_GB = {"lite": 5, "balanced": 25, "pro": 45}
# Disk blocks of a finished embedded index per byte of indexed source: Probe's own repository,
# 1.9 MB of source in 277 files (2,457 chunks, all embedded), took 26 MB under .probe/ (shard,
# manifest, symbol graph); a small project stays under a few MB. Rounded up for the estimate.
INDEX_BYTES_PER_SOURCE_BYTE = 15
INDEX_BASE_BYTES = 2_000_000

_DOCS = {
    # id: (text, dense direction)
    "00000000-0000-4000-8000-000000000001": ("def parse_http_header(line):\n    name, value = line.split(':', 1)",
                                             [1.0, 0.0, 0.0, 0.0]),
    "00000000-0000-4000-8000-000000000002": ("class HeaderCache:\n    '''keeps parsed header values'''",
                                             [0.8, 0.2, 0.0, 0.0]),
    "00000000-0000-4000-8000-000000000003": ("def hash_password(password, salt):\n    return pbkdf2(password, salt)",
                                             [0.0, 0.0, 1.0, 0.0]),
}


def fusion_roundtrip_check() -> Check:
    """Upsert 3 points into a scratch Qdrant Edge shard, run the hybrid (dense + BM25, RRF) query, check order."""
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="probe-doctor-") as tmp:
        store = EdgeStore(Path(tmp) / "shard", "doctor")
        try:
            store.ensure_collection(4)
            texts = [t for t, _ in _DOCS.values()]
            avg = sparse.estimate_avg_len(texts)
            store.upsert([
                StorePoint(id=pid, sparse=sparse.embed_document(text, avg),
                           payload={"workspace_id": "doctor", "file_path": pid},  # a shard stores no workspace id
                           dense=np.asarray(vec, dtype=np.float32))
                for pid, (text, vec) in _DOCS.items()
            ])
            hits = store.hybrid_query(HybridQuery(sparse=sparse.embed_query("parse header"),
                                                  dense=np.asarray([1.0, 0.05, 0.0, 0.0], dtype=np.float32),
                                                  limit=3, prefetch_limit=10))
        except (ProbeError, Exception) as exc:  # noqa: BLE001 - qdrant_edge raises bare Exception
            return Check("bm25_fusion", "fail", f"the scratch round-trip failed: {type(exc).__name__}: {exc}"[:300],
                         fix="reinstall Probe (`uv sync`): qdrant-edge-py is broken", group=G)
        finally:
            store.close()
    order = [h.id for h in hits]
    ids = list(_DOCS)
    ms = (time.perf_counter() - t0) * 1000
    bm25_ok = hits and hits[0].bm25_rank == 1 and all(h.bm25_rank is None for h in hits if h.id == ids[2])
    if order[:2] != ids[:2] or not bm25_ok:
        return Check("bm25_fusion", "fail", f"hybrid query order {order} is not the expected {ids}",
                     fix="report this: BM25 or RRF fusion misbehaves in this qdrant-edge-py build", group=G)
    return Check("bm25_fusion", "ok", f"BM25 + dense + RRF round-trip on a scratch Qdrant Edge shard: order "
                 f"correct ({ms:.0f} ms)", group=G, data={"ms": round(ms, 1)})


def index_need_bytes(root: Path) -> int:
    """What an embedded index of ``root`` takes on disk, estimated from the source it would index
    (the manifest's sizes when an index exists, else a scan with the indexer's own rules)."""
    from ..scan import scan_files

    manifest = Path(root) / ".probe" / "manifest.sqlite"
    source = None
    if manifest.exists():
        import sqlite3

        try:
            db = sqlite3.connect(readonly_uri(manifest), uri=True, timeout=5)
            try:
                source = db.execute("SELECT COALESCE(SUM(size), 0) FROM files").fetchone()[0]
            finally:
                db.close()
        except sqlite3.Error:
            source = None
    if source is None:
        try:
            source = sum(f.size for f in scan_files(Path(root)).files)
        except (OSError, ProbeError):
            source = 0
    return INDEX_BASE_BYTES + INDEX_BYTES_PER_SOURCE_BYTE * source


def disk_check(root: Path, preset: str, docker_root: str | None) -> Check:
    """Free space for the index (workspace) and, for stack presets, models and images (Docker's data root)."""
    need_gb = index_need_bytes(root) / _GB if preset == "embedded" else DISK_NEED_GB.get(preset, 1)
    target = Path(docker_root) if preset != "embedded" and docker_root and Path(docker_root).exists() else Path(root)
    probe = target
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        free_gb = shutil.disk_usage(probe).free / _GB
    except OSError as exc:
        return Check("disk", "warn", f"cannot measure free space at {probe}: {exc}", group=G)
    what = "models and images" if target != Path(root) else ("the index" if preset == "embedded"
                                                             else "the index (models live on the Docker host)")
    data = {"path": str(probe), "free_gb": round(free_gb, 1), "need_gb": round(need_gb, 3)}
    need = _size(need_gb)
    if free_gb < need_gb:
        return Check("disk", "fail", f"{free_gb:.1f} GB free at {probe}; {what} for {preset} need ≈ {need}",
                     fix="free disk space (or `docker system prune` for old images)", group=G, data=data)
    status = "warn" if free_gb < need_gb * 2 else "ok"
    return Check("disk", status, f"{free_gb:.1f} GB free at {probe} ({what} for {preset}: ≈ {need})",
                 group=G, data=data)


def _size(gb: float) -> str:
    return f"{gb:g} GB" if gb >= 1 else f"{max(1, round(gb * 1000))} MB"


def index_files_check(root: Path) -> Check:
    """The workspace's index files: damage a read recorded, or a manifest failing ``quick_check``
    (read-only: safe beside a running owner)."""
    from ..storage.damage import quick_check, recorded_damage

    probe_dir = Path(root) / ".probe"
    manifest = probe_dir / "manifest.sqlite"
    if not manifest.exists():
        return Check("index_files", "skip", f"no index under {probe_dir} yet", group=G)
    fix = f"`probe index --rebuild --root {root}` rebuilds it from the files (a running Probe server repairs it itself)"
    if (seen := recorded_damage(probe_dir)) is not None:
        return Check("index_files", "fail", seen, fix=fix, group=G)
    if (problem := quick_check(manifest)) is not None:
        return Check("index_files", "fail", f"{manifest} is damaged: {problem}", fix=fix, group=G)
    return Check("index_files", "ok", f"{manifest} passes SQLite's quick_check; no store damage recorded", group=G)


def data_dir_check() -> Check:
    """The user data directory (global memory rules, libraries, the workspace registry) is usable."""
    from ..config import user_data_dir, user_data_dir_problem

    if (problem := user_data_dir_problem()) is not None:
        return Check("data_dir", "fail", problem, fix="point XDG_DATA_HOME (or PROBE_DATA_DIR) at a directory you "
                     "can write", group=G)
    return Check("data_dir", "ok", f"user data in {user_data_dir()}", group=G)
