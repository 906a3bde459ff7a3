"""The manifest's tables and how an older manifest is brought up to them (``storage/manifest.py``).

Kept apart from the manifest's reads and writes so that each file says one thing: what is stored,
and how each schema version became the next. A migration only adds or drops; it never loses what
the index needs (a manifest that cannot be migrated would be rebuilt by ``probe index --rebuild``).
"""
from __future__ import annotations

import logging
import time

from ..errors import IndexTooNew
from .manifest_codec import digest, pid

SCHEMA_VERSION = 7
log = logging.getLogger("probe.manifest")

_SCHEMA_TEMPLATE = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    file_hash TEXT NOT NULL,
    language TEXT,
    chunk_kind TEXT,
    last_indexed_at REAL NOT NULL,
    last_error TEXT,
    -- with mtime_ns and size, what change detection compares (indexing.change_detection);
    -- ctime_ns 0: not verified, hash the file at the next scan
    ctime_ns INTEGER NOT NULL DEFAULT 0,
    inode INTEGER NOT NULL DEFAULT 0,
    dev INTEGER NOT NULL DEFAULT 0
);
-- a chunk names its file by ``paths.id``; its point id and hashes are stored as bytes
-- (``manifest_codec.py``: version 6; the path, a 36-character id and hex text before)
CREATE TABLE IF NOT EXISTS paths (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE);
{chunks}CREATE INDEX IF NOT EXISTS chunks_path ON chunks(file, start_line);
-- the chunks without a dense vector: empty once the fill is done (version 6 indexed all, 1.2 MB on
-- the monorepo; ``_migrate`` makes it partial)
CREATE INDEX IF NOT EXISTS chunks_dense ON chunks(has_dense) WHERE has_dense=0;
-- the version of each file a branch had when it was last indexed (checked out)
CREATE TABLE IF NOT EXISTS branch_files (
    branch TEXT NOT NULL,
    path TEXT NOT NULL,
    file_hash TEXT NOT NULL,
    PRIMARY KEY (branch, path)
);
CREATE INDEX IF NOT EXISTS branch_files_version ON branch_files(path, file_hash);
-- chunk text waiting for its dense vector (progressive indexing); removed once embedded. The text
-- is stored zlib-compressed (a BLOB; rows of older versions hold TEXT): a lexical-only index of a
-- large repository queues about its whole source, so that is 2.5x smaller
-- fill_order: the queue's key, smallest first (indexing/fill_order.py; -1: not ranked yet).
-- A queued chunk's path is its chunks row's (no path here: version 5; no index on it: version 4)
{queue}CREATE INDEX IF NOT EXISTS pending_order ON pending_dense(fill_order);  -- rowid is its tail
"""

_CHUNKS = """CREATE TABLE IF NOT EXISTS {name} (
    point_id BLOB PRIMARY KEY,
    file INTEGER NOT NULL,
    chunk_idx INTEGER NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    chunk_hash BLOB NOT NULL,
    symbol TEXT,
    symbol_kind TEXT,
    parent_symbol TEXT,
    is_fragment INTEGER NOT NULL DEFAULT 0,
    has_dense INTEGER NOT NULL DEFAULT 0,
    file_hash BLOB NOT NULL DEFAULT '',
    live INTEGER NOT NULL DEFAULT 1
);
"""
_QUEUE = """CREATE TABLE IF NOT EXISTS {name} (
    point_id BLOB PRIMARY KEY,
    text TEXT NOT NULL,
    fill_order INTEGER NOT NULL DEFAULT -1
);
"""
_SCHEMA = _SCHEMA_TEMPLATE.format(chunks=_CHUNKS.format(name="chunks"), queue=_QUEUE.format(name="pending_dense"))


# What a connection leaves of the manifest's WAL file once a checkpoint has folded it in: SQLite keeps
# the file at its largest otherwise, and a monorepo's bulk build grows it to 35 MB that then stayed
# beside an idle owner's manifest until its last connection closed.
WAL_SIZE_LIMIT = 4 * 1024 * 1024


def use_wal(db) -> None:
    """The settings every connection to the manifest file uses (the manifest's and the graph's)."""
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}")


def create_or_migrate(db) -> None:
    """Bring the manifest behind ``db`` (a ``CheckedConnection``, autocommit) to ``SCHEMA_VERSION``.

    A new file is made with ``auto_vacuum=INCREMENTAL`` (it can only be chosen before the first
    table): pages the dense queue frees as it drains are then given back to the file system
    (``DenseQueue.mark_dense_done``). A manifest made before keeps its mode until it is rebuilt.
    """
    if db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0] == 0:
        db.execute("PRAGMA auto_vacuum=INCREMENTAL")
    _refuse_newer(db)
    use_wal(db)
    _migrate(db)
    db.executescript(_SCHEMA)


def _migrate(db) -> None:
    """Version 1 → 2: chunks learn their file version and whether they are live.
    Version 2 → 3: files learn ctime, inode and device; rows migrated hold 0 (not verified), so
    the next scan hashes each file once and records its full stat. The dense queue learns its
    fill order (rows queued before are ranked by ``indexing.fill_order.rank_queue``).
    Version 3 → 4: the dense queue's index on path goes (a file's rows are found by point id
    through ``chunks``): a fifth of the queue's size.
    Version 4 → 5: the dense queue's path column goes too (read from ``chunks`` by point id): a
    lexical-only monorepo index's queue is mostly empty texts, so the paths were a quarter of it.
    Version 5 → 6: compact chunks (``_to_compact_chunks``).
    Version 6 → 7: ``chunks_dense`` holds only the chunks without a vector. Nothing else changes
    here; the store's new points carry their file's version in their id and neither hash in their
    payload (``storage/edge_payload.py``), which a Probe before version 7 would read as every range
    stale: it refuses the index instead (``_refuse_newer``)."""
    file_cols = {r[1] for r in db.execute("PRAGMA table_info(files)")}
    if file_cols and "ctime_ns" not in file_cols:
        db.executescript("""
            BEGIN IMMEDIATE;
            ALTER TABLE files ADD COLUMN ctime_ns INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE files ADD COLUMN inode INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE files ADD COLUMN dev INTEGER NOT NULL DEFAULT 0;
            COMMIT;
        """)
    queue_cols = {r[1] for r in db.execute("PRAGMA table_info(pending_dense)")}
    if queue_cols and "fill_order" not in queue_cols:
        db.execute("ALTER TABLE pending_dense ADD COLUMN fill_order INTEGER NOT NULL DEFAULT -1")
    cols = {r[1] for r in db.execute("PRAGMA table_info(chunks)")}
    if cols and "live" not in cols:
        db.executescript("""
            BEGIN IMMEDIATE;
            ALTER TABLE chunks ADD COLUMN file_hash TEXT NOT NULL DEFAULT '';
            ALTER TABLE chunks ADD COLUMN live INTEGER NOT NULL DEFAULT 1;
            UPDATE chunks SET file_hash = COALESCE((SELECT f.file_hash FROM files f WHERE f.path = chunks.path), '');
            COMMIT;
        """)
    db.execute("DROP INDEX IF EXISTS pending_path")
    if "path" in queue_cols:  # after its index is gone: SQLite drops no indexed column
        db.execute("ALTER TABLE pending_dense DROP COLUMN path")
    if cols and "path" in cols:
        _to_compact_chunks(db)
    drop_whole_index(db, "chunks_dense")


def drop_whole_index(db, name: str) -> None:
    """An index that is now partial but was made whole before is dropped: the schema's ``CREATE
    INDEX IF NOT EXISTS`` makes it again, with its ``WHERE`` (the manifest's and the graph's)."""
    row = db.execute("SELECT sql FROM sqlite_master WHERE type='index' AND name=?", (name,)).fetchone()
    if row is not None and " WHERE " not in (row[0] or "").upper():
        db.execute(f"DROP INDEX IF EXISTS {name}")


def _refuse_newer(db) -> None:
    """A manifest written by a newer Probe (a layout this code cannot read) is left as it is."""
    if db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone() is None:
        return
    row = db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    try:
        found = int(row[0]) if row else 0
    except ValueError:
        found = 0
    if found > SCHEMA_VERSION:
        raise IndexTooNew(
            f"this index's manifest is schema version {found}, newer than this Probe's {SCHEMA_VERSION}: "
            "upgrade Probe, or run `probe index --rebuild` to index again with this version")


_COMPACT_CHUNKS = (
    "CREATE TABLE paths (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE)",
    "INSERT INTO paths(path) SELECT DISTINCT path FROM chunks ORDER BY path",
    _CHUNKS.format(name="chunks_v6"),
    "INSERT INTO chunks_v6(rowid, point_id, file, chunk_idx, start_line, end_line, chunk_hash, symbol, symbol_kind,"
    " parent_symbol, is_fragment, has_dense, file_hash, live) SELECT c.rowid, probe_pid(c.point_id), p.id,"
    " c.chunk_idx, c.start_line, c.end_line, probe_digest(c.chunk_hash), c.symbol, c.symbol_kind, c.parent_symbol,"
    " c.is_fragment, c.has_dense, probe_digest(c.file_hash), c.live FROM chunks c CROSS JOIN paths p ON p.path = c.path"
    " ORDER BY c.rowid",
    "DROP TABLE chunks",
    "ALTER TABLE chunks_v6 RENAME TO chunks",
    _QUEUE.format(name="pending_v6"),
    "INSERT INTO pending_v6(rowid, point_id, text, fill_order)"
    " SELECT rowid, probe_pid(point_id), text, fill_order FROM pending_dense ORDER BY rowid",
    "DROP TABLE pending_dense",
    "ALTER TABLE pending_v6 RENAME TO pending_dense",
)


def _to_compact_chunks(db) -> None:
    """Version 5 → 6, in place and in one transaction: ``chunks`` names its file by ``paths.id``
    and keeps point ids and hashes as bytes, the queue its point ids (``manifest_codec.py``).
    Row ids are kept (they order the queue and break ties between chunks); nothing else changes,
    the store's points and vectors are not touched."""
    began = time.monotonic()
    db.create_function("probe_pid", 1, pid, deterministic=True)
    db.create_function("probe_digest", 1, digest, deterministic=True)
    db.execute("BEGIN IMMEDIATE")
    try:
        # another process opening the same manifest may have converted it meanwhile
        if "path" not in {r[1] for r in db.execute("PRAGMA table_info(chunks)")}:
            db.execute("ROLLBACK")
            return
        for statement in _COMPACT_CHUNKS:
            db.execute(statement)
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    if db.execute("PRAGMA auto_vacuum").fetchone()[0] == 2:  # the old tables' pages back to the file system
        db.executescript("PRAGMA incremental_vacuum;")
    log.info("manifest: chunks converted to schema 6 in %.1f s", time.monotonic() - began)
