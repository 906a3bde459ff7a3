"""The store's write-ahead log cut back to one segment when the idle owner upkeeps the store.

Qdrant Edge logs every write in 32 MB segment files. After a flush it keeps the segment being
written (``open-N``) and the last full one (``closed-N``); nothing outside Qdrant may remove either
(``docs/benchmarks.md``, "A compact index, round 3": a closed segment deleted by hand renumbers the
log, and later updates of existing points are silently lost). So once a fill ends, the open
segment keeps whatever share of its 32 MB the last writes filled, until the next 32 MB of writes:
a settled index carried 33.5 MB of log or 64 MB, by chance (the monorepo: 37 MB in one run, 63 MB
in the next, for the same points).

``roll_wal`` lets Qdrant do the cutting: it writes operations that change nothing — deletes of
random UUIDv4 ids, which no Probe point has (their ids are v5 or v8, ``records.point_id``) —
until the log starts a new segment, then flushes; Qdrant then drops the older closed segment
itself, and what is left is one full closed segment and a nearly empty open one. It runs only
when the open segments hold more than ``ROLL_MIN_BYTES``: at most one segment's worth of writes
(~32 MB, under a second). Updates after it, and after a reopen, are kept
(``tests/storage/test_edge_wal.py``).
"""
from __future__ import annotations

import logging
import shutil
import uuid
from pathlib import Path

import qdrant_edge as qe

log = logging.getLogger("probe.store")

ROLL_MIN_BYTES = 8 << 20  # written in the open segments: less is not worth a segment's writes
_IDS_PER_OP = 2000  # ~36 KB logged an operation
_MAX_OPS = 1500  # ~54 MB: past one 32 MB segment whatever its fill, a bound if the log never rolls
_CHECK_EVERY = 8  # operations between looks at the log's files
_ROOM = 128 << 20  # free disk a roll needs: its writes, and the room everything else keeps


def wal_bytes(wal_dir: Path, prefix: str = "") -> int:
    """Bytes allocated on disk by the log's files whose names start with ``prefix``."""
    try:
        return sum(f.stat().st_blocks * 512 for f in Path(wal_dir).iterdir() if f.name.startswith(prefix))
    except OSError:
        return 0


def _closed(wal_dir: Path) -> set[str]:
    return {f.name for f in Path(wal_dir).iterdir() if f.name.startswith("closed-")}


def roll_wal(shard, wal_dir: Path, *, min_bytes: int = ROLL_MIN_BYTES) -> int:
    """Make the log of the open ``shard`` (a ``qdrant_edge.EdgeShard``, held by the caller) start a
    new segment when its open segments hold more than ``min_bytes``; the bytes freed (0: nothing
    done, or the log grew)."""
    wal_dir = Path(wal_dir)
    if not wal_dir.is_dir() or wal_bytes(wal_dir, "open-") <= min_bytes or shutil.disk_usage(wal_dir).free < _ROOM:
        return 0
    shard.flush()
    before, closed = wal_bytes(wal_dir), _closed(wal_dir)
    for op in range(1, _MAX_OPS + 1):
        shard.update(qe.UpdateOperation.delete_points([uuid.uuid4() for _ in range(_IDS_PER_OP)]))
        if op % _CHECK_EVERY == 0 and _closed(wal_dir) - closed:
            break
    shard.flush()  # Qdrant drops the closed segment before the new one now
    freed = before - wal_bytes(wal_dir)
    log.info("store log rolled to a new segment: %.1f MB freed", freed / 2**20)
    return max(freed, 0)
