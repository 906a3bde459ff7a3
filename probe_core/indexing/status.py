"""What ``probe status`` and the MCP ``index_status`` tool report about one index.

The reference libraries searched beside a project are not the index's business: the faces add
them (``libraries.manage.with_library_summaries``)."""
from __future__ import annotations

import json
import sqlite3
import time

from ..errors import IndexConfigMismatch, IndexDamaged, ProbeError
from ..redaction import public_url
from ..storage.damage import recorded_damage
from ..workspace import Workspace
from .store_check import check_store


MAX_LISTED = 50  # branches, libraries: the answer's size must not follow what the store holds


def index_status(ws: Workspace, *, probe_backend: bool = True) -> dict:
    """Counts, identity, generation and health of the workspace's index (never raises for a
    damaged index: that is reported as ``index_damaged`` with the fix in ``last_error``)."""
    for attempt in (1, 2):
        try:
            out = _index_status(ws, probe_backend=probe_backend)
            break
        except IndexDamaged as exc:
            return damaged_status(ws, str(exc))
        except sqlite3.ProgrammingError:  # a repair closed the manifest this read held (``parts_closed``):
            if attempt == 2:  # the next ``ws.manifest`` is the rebuilt one
                raise
    if (seen := recorded_damage(ws.probe_dir)) is not None:  # a read failed on damaged files (any process)
        out.update(index_damaged=True, last_error=seen)
    from ..config import user_data_dir_problem

    out["user_data_dir_error"] = user_data_dir_problem()  # said now, not when a global rule fails to save
    return out


def damaged_status(ws: Workspace, message: str) -> dict:
    """What status says about an index whose files are damaged: zero counts (none can be trusted)."""
    return {"root": str(ws.root), "workspace_id": ws.workspace_id, "preset": ws.config.preset,
            "collection": ws.collection, "index_damaged": True, "index_generation": 0,
            "files_indexed": 0, "chunks_indexed": 0, "backend_reachable": True,
            "last_error": message, "last_errors": []}


def _index_status(ws: Workspace, *, probe_backend: bool) -> dict:
    man = ws.manifest
    counts = man.counts()
    last_scan = man.get_meta("last_scan_at")
    out: dict = {
        "root": str(ws.root),
        "workspace_id": ws.workspace_id,
        "preset": ws.config.preset,
        "store": public_url(ws.config.qdrant_url) or f"qdrant-edge:{ws.probe_dir / 'store' / ws.collection}",
        "collection": ws.collection,
        "embedding_model_id": man.get_meta("embedding_model_id"),
        "embedding_dimensions": int(man.get_meta("embedding_dimensions") or 0) or None,
        "index_generation": man.generation,
        "branch": ws.branch or None,  # checked out now (a detached HEAD: its short sha)
        "indexed_branches": man.branches()[:MAX_LISTED],  # searchable with filters.branch (first ones)
        "files_indexed": counts["files"],
        "files_failed": counts["files_failed"],
        "chunks_indexed": counts["chunks"],
        "chunks_embedded": counts["chunks_dense"],
        "dense_coverage": round(counts["chunks_dense"] / counts["chunks"], 4) if counts["chunks"] else 0.0,
        "last_scan_at": float(last_scan) if last_scan else None,
        "seconds_since_scan": round(time.time() - float(last_scan), 1) if last_scan else None,
        "interrupted_run": man.get_meta("index_dirty") == "1",
        "index_config_mismatch": False,
        "index_damaged": False,
        "backend_reachable": None,
        "last_errors": [{"path": p, "error": e} for p, e in man.errors(limit=10)],
    }
    if len(out["indexed_branches"]) == MAX_LISTED:
        out["indexed_branches_total"] = len(man.branches())
    skipped = _skipped(man.get_meta("skipped_files"))
    out["files_skipped"] = sum(skipped["by_reason"].values()) if skipped else None
    out["skipped"] = skipped
    if probe_backend and man.get_meta("embedding_model_id"):
        try:
            from .indexer import check_identity

            check_identity(ws, adopt=False)
        except IndexConfigMismatch as exc:
            out["index_config_mismatch"] = True
            out["last_error"] = str(exc)
        except ProbeError as exc:
            out["last_error"] = str(exc)
        try:
            check = check_store(ws)
            out["points_in_store"] = check.store_points
            out["backend_reachable"] = True
            if not check.consistent:  # the store lost points: the counts above are the manifest's wish
                out["store_missing_points"] = check.missing
                out["last_error"] = check.message()
        except ProbeError as exc:
            out["backend_reachable"] = False
            out["last_error"] = str(exc)
    return out


def _skipped(raw: str | None) -> dict | None:
    """The last full scan's files left out, by reason, with examples (None before the first scan)."""
    try:
        data = json.loads(raw) if raw else None
    except ValueError:
        return None
    return data if isinstance(data, dict) and isinstance(data.get("by_reason"), dict) else None
