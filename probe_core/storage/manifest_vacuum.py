"""Compacting the manifest file once a large change has settled (issue 18, item 4).

Rows written in bulk leave SQLite's B-tree pages part-empty (the graph's postings and names are
inserted in key order per batch, not across batches), and ``auto_vacuum=INCREMENTAL`` gives back
only whole free pages: the monorepo's filled manifest is 120 MB, 113 MB once rewritten. ``VACUUM``
rewrites it densely; the idle owner runs it when it upkeeps the store (``indexing/scheduler.py``),
after the dense fill or after a fifth of the index was written anew.

It runs on a connection of its own. In WAL mode readers go on meanwhile (they keep their
snapshot, and a search's is short: the rewritten pages are folded back once they finish); a writer
on another connection makes it give up after a short wait instead of blocking (the owner's worker,
the only writer, is the one calling it). SQLite writes the whole database into the WAL before
folding it back, so it needs about twice the file's size free, and the WAL is truncated afterwards.
"""
from __future__ import annotations

import logging
import shutil
import sqlite3
import time
from pathlib import Path

from .disk_space import min_free_bytes
from .manifest_schema import use_wal

log = logging.getLogger("probe.engine")
CHECKPOINT_TRIES, CHECKPOINT_WAIT_S = 20, 0.1


def compact_manifest(path: Path, *, busy_s: float = 0.5) -> int | None:
    """``VACUUM`` the SQLite file at ``path``; the bytes it gave back, or None when skipped (too
    little disk free for the rewrite, or another connection was writing)."""
    path = Path(path)
    try:
        before = path.stat().st_size
        free = shutil.disk_usage(path.parent).free
    except OSError:
        return None
    if free < 2 * before + min_free_bytes():
        log.info("manifest compaction skipped: %d MB free is too little", free // 2**20)
        return None
    db = sqlite3.connect(str(path), isolation_level=None, timeout=busy_s)
    try:
        use_wal(db)
        db.execute("VACUUM")
        for _ in range(CHECKPOINT_TRIES):  # a reader on the old pages holds the fold back a moment
            if db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0:
                break
            time.sleep(CHECKPOINT_WAIT_S)  # else a later checkpoint folds it in
    except sqlite3.OperationalError as exc:  # "database is locked": a write in progress; tried at the next upkeep
        log.info("manifest compaction skipped: %s", exc)
        return None
    finally:
        db.close()
    after = path.stat().st_size
    log.info("manifest compacted: %.1f → %.1f MB", before / 1e6, after / 1e6)
    return before - after
