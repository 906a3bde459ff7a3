"""The manifest's tables and how an older manifest is brought up to them (``storage/manifest.py``).

Kept apart from the manifest's reads and writes so that each file says one thing: what is stored,
and how each schema version became the next. A migration only adds or drops; it never loses what
the index needs (a manifest that cannot be migrated would be rebuilt by ``probe index --rebuild``).
"""
from __future__ import annotations

SCHEMA_VERSION = 5

_SCHEMA = """
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
CREATE TABLE IF NOT EXISTS chunks (
    point_id TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    chunk_idx INTEGER NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    chunk_hash TEXT NOT NULL,
    symbol TEXT,
    symbol_kind TEXT,
    parent_symbol TEXT,
    is_fragment INTEGER NOT NULL DEFAULT 0,
    has_dense INTEGER NOT NULL DEFAULT 0,
    file_hash TEXT NOT NULL DEFAULT '',
    live INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path, start_line);
CREATE INDEX IF NOT EXISTS chunks_dense ON chunks(has_dense);
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
CREATE TABLE IF NOT EXISTS pending_dense (
    point_id TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    fill_order INTEGER NOT NULL DEFAULT -1
);
CREATE INDEX IF NOT EXISTS pending_order ON pending_dense(fill_order);  -- rowid is its tail
"""


def create_or_migrate(db) -> None:
    """Bring the manifest behind ``db`` (a ``CheckedConnection``, autocommit) to ``SCHEMA_VERSION``.

    A new file is made with ``auto_vacuum=INCREMENTAL`` (it can only be chosen before the first
    table): pages the dense queue frees as it drains are then given back to the file system
    (``DenseQueue.mark_dense_done``). A manifest made before keeps its mode until it is rebuilt.
    """
    if db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0] == 0:
        db.execute("PRAGMA auto_vacuum=INCREMENTAL")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
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
    lexical-only monorepo index's queue is mostly empty texts, so the paths were a quarter of it."""
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
