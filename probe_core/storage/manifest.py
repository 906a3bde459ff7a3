"""The SQLite (WAL) manifest: what was indexed, from which file version, and what still needs
dense vectors. It is the source of truth for incremental indexing and crash recovery.

Write order per file (see ``indexing/indexer.py``): delete the file's points → upsert the new
points → commit the file row with its new ``(mtime, size, hash)``. A kill -9 anywhere before the
commit leaves the old row, so the next run redoes the file; point ids are deterministic, so the
redo cannot duplicate.
"""
from __future__ import annotations

import sqlite3
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

SCHEMA_VERSION = 1

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
    last_error TEXT
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
    has_dense INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path, start_line);
CREATE INDEX IF NOT EXISTS chunks_dense ON chunks(has_dense);
-- chunk text waiting for its dense vector (progressive indexing); removed once embedded
CREATE TABLE IF NOT EXISTS pending_dense (
    point_id TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS pending_path ON pending_dense(path);
"""


@dataclass(frozen=True, slots=True)
class FileRow:
    path: str
    mtime_ns: int
    size: int
    file_hash: str
    last_error: str | None


@dataclass(frozen=True, slots=True)
class ChunkRow:
    point_id: str
    path: str
    chunk_idx: int
    start_line: int
    end_line: int
    chunk_hash: str
    symbol: str | None
    symbol_kind: str | None
    parent_symbol: str | None
    is_fragment: bool


class Manifest:
    """One workspace's manifest. Safe to share between threads of one process."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._lock = threading.RLock()
        if self.get_meta("schema_version") is None:
            self.set_meta("schema_version", str(SCHEMA_VERSION))

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextmanager
    def transaction(self):
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # -- meta --------------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", (key, value))

    @property
    def generation(self) -> int:
        return int(self.get_meta("index_generation") or 0)

    def bump_generation(self) -> int:
        with self.transaction() as db:
            row = db.execute("SELECT value FROM meta WHERE key='index_generation'").fetchone()
            gen = int(row[0]) + 1 if row else 1
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES('index_generation', ?)", (str(gen),))
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES('last_scan_at', ?)", (str(time.time()),))
        return gen

    # -- files -------------------------------------------------------------------------------
    def files(self) -> dict[str, FileRow]:
        with self._lock:
            rows = self._db.execute("SELECT path, mtime_ns, size, file_hash, last_error FROM files").fetchall()
        return {r[0]: FileRow(*r) for r in rows}

    def file_paths(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._db.execute("SELECT path FROM files ORDER BY path")]

    def replace_file(self, row: FileRow, language: str | None, chunk_kind: str | None,
                     chunks: list[ChunkRow], texts: list[str], *, dense_done: bool = False) -> None:
        """Atomically record a file's new version and chunks (and queue them for dense vectors)."""
        now = time.time()
        with self.transaction() as db:
            db.execute("DELETE FROM chunks WHERE path=?", (row.path,))
            db.execute("DELETE FROM pending_dense WHERE path=?", (row.path,))
            db.execute(
                "INSERT OR REPLACE INTO files(path, mtime_ns, size, file_hash, language, chunk_kind,"
                " last_indexed_at, last_error) VALUES(?,?,?,?,?,?,?,?)",
                (row.path, row.mtime_ns, row.size, row.file_hash, language, chunk_kind, now, row.last_error),
            )
            db.executemany(
                "INSERT OR REPLACE INTO chunks(point_id, path, chunk_idx, start_line, end_line, chunk_hash,"
                " symbol, symbol_kind, parent_symbol, is_fragment, has_dense) VALUES(?,?,?,?,?,?,?,?,?,?,?)",
                [(c.point_id, c.path, c.chunk_idx, c.start_line, c.end_line, c.chunk_hash, c.symbol,
                  c.symbol_kind, c.parent_symbol, int(c.is_fragment), int(dense_done)) for c in chunks],
            )
            if not dense_done:
                db.executemany("INSERT OR REPLACE INTO pending_dense(point_id, path, text) VALUES(?,?,?)",
                               [(c.point_id, c.path, t) for c, t in zip(chunks, texts)])

    def remove_file(self, path: str) -> None:
        with self.transaction() as db:
            db.execute("DELETE FROM chunks WHERE path=?", (path,))
            db.execute("DELETE FROM pending_dense WHERE path=?", (path,))
            db.execute("DELETE FROM files WHERE path=?", (path,))

    def forget_file_version(self, path: str) -> None:
        """Make the next scan redo this file (used when reconciliation finds it incomplete)."""
        with self._lock:
            self._db.execute("UPDATE files SET mtime_ns=-1, file_hash='' WHERE path=?", (path,))

    def mark_error(self, path: str, mtime_ns: int, size: int, error: str) -> None:
        """Record a file that failed (so it is skipped until it changes) without chunks."""
        with self.transaction() as db:
            db.execute("DELETE FROM chunks WHERE path=?", (path,))
            db.execute("DELETE FROM pending_dense WHERE path=?", (path,))
            db.execute(
                "INSERT OR REPLACE INTO files(path, mtime_ns, size, file_hash, language, chunk_kind,"
                " last_indexed_at, last_error) VALUES(?,?,?,?,NULL,NULL,?,?)",
                (path, mtime_ns, size, "", time.time(), error[:500]),
            )

    def errors(self, limit: int = 20) -> list[tuple[str, str]]:
        with self._lock:
            return self._db.execute(
                "SELECT path, last_error FROM files WHERE last_error IS NOT NULL"
                " ORDER BY last_indexed_at DESC LIMIT ?", (limit,)).fetchall()

    # -- chunks ------------------------------------------------------------------------------
    def chunk_ids(self) -> dict[str, str]:
        with self._lock:
            return dict(self._db.execute("SELECT point_id, path FROM chunks").fetchall())

    def chunks_for(self, path: str) -> list[ChunkRow]:
        with self._lock:
            rows = self._db.execute(
                "SELECT point_id, path, chunk_idx, start_line, end_line, chunk_hash, symbol, symbol_kind,"
                " parent_symbol, is_fragment FROM chunks WHERE path=? ORDER BY start_line", (path,)).fetchall()
        return [ChunkRow(*r[:9], bool(r[9])) for r in rows]

    def counts(self) -> dict[str, int]:
        with self._lock:
            files = self._db.execute("SELECT COUNT(*) FROM files WHERE last_error IS NULL").fetchone()[0]
            failed = self._db.execute("SELECT COUNT(*) FROM files WHERE last_error IS NOT NULL").fetchone()[0]
            chunks = self._db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
            dense = self._db.execute("SELECT COUNT(*) FROM chunks WHERE has_dense=1").fetchone()[0]
        return {"files": files, "files_failed": failed, "chunks": chunks, "chunks_dense": dense}

    def pending_dense(self, limit: int) -> list[tuple[str, str, str]]:
        """(point_id, path, text) of chunks still waiting for dense vectors, oldest files first."""
        with self._lock:
            return self._db.execute(
                "SELECT point_id, path, text FROM pending_dense ORDER BY rowid LIMIT ?", (limit,)).fetchall()

    def mark_dense_done(self, point_ids: list[str]) -> None:
        with self.transaction() as db:
            db.executemany("DELETE FROM pending_dense WHERE point_id=?", [(i,) for i in point_ids])
            db.executemany("UPDATE chunks SET has_dense=1 WHERE point_id=?", [(i,) for i in point_ids])

    def reset_dense(self) -> None:
        """Forget all dense progress (embedder changed): every chunk must be re-queued by a rescan."""
        with self.transaction() as db:
            db.execute("UPDATE chunks SET has_dense=0")
            db.execute("UPDATE files SET mtime_ns=-1, file_hash=''")

    def clear(self) -> None:
        with self.transaction() as db:
            for table in ("files", "chunks", "pending_dense"):
                db.execute(f"DELETE FROM {table}")
            db.execute("DELETE FROM meta WHERE key NOT IN ('schema_version')")
