"""The SQLite (WAL) manifest: what was indexed, from which file version, and what still needs
dense vectors. It is the source of truth for incremental indexing and crash recovery.

Write order per file (see ``indexing/indexer.py``): delete the file's points → upsert the new
points → commit the file row with its new stat fields and hash. A kill -9 anywhere before the
commit leaves the old row, so the next run redoes the file; point ids are deterministic, so the
redo cannot duplicate.

Branches: ``files`` describes the checked-out working tree and its chunks are *live*. A version of a
file that another branch still has (``branch_files``: the version each branch had when it was last
indexed) keeps its chunks and points with ``live = 0``; checking that branch out again revives them
instead of re-chunking and re-embedding.
"""
from __future__ import annotations

import sqlite3
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..errors import IndexDamaged
from .damage import CheckedConnection, check_on_open, mark_clean
from .dense_queue import FROM_FILE, DenseQueue, pack
from .manifest_codec import FILE, digest, digest_text, forget_path, hex_sql, path_ids, pid, pid_text, pids, stored_ids
from .manifest_schema import SCHEMA_VERSION, create_or_migrate

__all__ = ["ChunkRow", "FileRow", "Manifest", "NewFile", "SCHEMA_VERSION"]


@dataclass(frozen=True, slots=True)
class FileRow:
    path: str
    mtime_ns: int
    size: int
    file_hash: str
    last_error: str | None
    ctime_ns: int = 0  # 0: not verified (racy when recorded, or from a version 2 manifest)
    inode: int = 0
    dev: int = 0


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


# a chunks row's columns but its file, for ``_chunk_row``
_CHUNK_COLUMNS = ("point_id, chunk_idx, start_line, end_line, chunk_hash, symbol, symbol_kind, parent_symbol,"
                  " is_fragment")


def _chunk_row(path: str, r: tuple) -> ChunkRow:
    return ChunkRow(pid_text(r[0]), path, r[1], r[2], r[3], digest_text(r[4]), r[5], r[6], r[7], bool(r[8]))


class Manifest(DenseQueue):
    """One workspace's manifest. Safe to share between threads of one process. The dense queue's
    methods are in ``dense_queue.py``, the tables and migrations in ``manifest_schema.py``."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        check_on_open(self.path)  # after an unclean stop: quick_check, IndexDamaged if it fails
        raw = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None, timeout=30)
        self._db = CheckedConnection(raw, self.path)  # corruption → IndexDamaged, wherever it shows
        try:
            create_or_migrate(self._db)
            self._lock = threading.RLock()
            self.set_meta("schema_version", str(SCHEMA_VERSION))
        except BaseException:
            raw.close()
            raise

    def close(self) -> None:
        with self._lock:
            self._db.close()
        mark_clean(self.path)  # the next open skips the integrity check unless the file changes

    @contextmanager
    def transaction(self):
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                try:
                    self._db.execute("ROLLBACK")
                except (sqlite3.Error, IndexDamaged):  # a damaged file can fail the rollback too: the first error counts
                    pass
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

    def mark_scanned(self) -> int:
        """Record a completed scan that changed nothing: the generation stays. Returns it."""
        self.set_meta("last_scan_at", str(time.time()))
        return self.generation

    # -- files -------------------------------------------------------------------------------
    def files(self) -> dict[str, FileRow]:
        with self._lock:
            rows = self._db.execute("SELECT path, mtime_ns, size, file_hash, last_error, ctime_ns, inode, dev"
                                    " FROM files").fetchall()
        return {r[0]: FileRow(*r) for r in rows}

    def file_facets(self) -> dict[str, tuple[str | None, str | None]]:
        """Each indexed file's ``(language, chunk_kind)``: what the search filters select on."""
        with self._lock:
            return {r[0]: (r[1], r[2]) for r in self._db.execute("SELECT path, language, chunk_kind FROM files")}

    def has_chunks(self) -> bool:
        """Whether any version of any file has chunks (False: a new index, or one emptied)."""
        with self._lock:
            return self._db.execute("SELECT 1 FROM chunks LIMIT 1").fetchone() is not None

    def file_paths(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._db.execute("SELECT path FROM files ORDER BY path")]

    def replace_file(self, row: FileRow, language: str | None, chunk_kind: str | None,
                     chunks: list[ChunkRow], texts: list[str] | list[bytes], *, dense_done: bool = False,
                     retain_old: bool = False, embedded: set[str] | frozenset[str] = frozenset(),
                     fill_order: int = -1, packed: bool = False) -> None:
        """Atomically record a file's new version and chunks (and queue them for dense vectors).
        ``retain_old`` keeps the previous version's chunks for the branches that still have it;
        ``embedded``: chunks whose dense vector was stored with them (not queued); ``fill_order``:
        the queue key of the file's chunks (``indexing/fill_order.py``); ``packed``: ``texts`` are
        compressed already (``dense_queue.pack``)."""
        now = time.time()
        with self.transaction() as db:
            _leave_live(db, row.path, retain_old)
            _put_files(db, [NewFile(row, language, chunk_kind, chunks,
                                    texts if packed else [pack(t) for t in texts], fill_order)],
                       now, dense_done=dense_done, embedded=embedded)

    def add_files(self, files: list["NewFile"]) -> None:
        """``replace_file`` of many files in one transaction, for files with no chunks in the
        manifest (a new index's: nothing to delete first), their texts compressed already."""
        if files:
            with self.transaction() as db:
                _put_files(db, files, time.time())

    def remove_file(self, path: str, *, retain: bool = False) -> None:
        """Forget the checked-out version of ``path``; ``retain`` keeps its chunks for other branches."""
        with self.transaction() as db:
            _leave_live(db, path, retain)
            db.execute("DELETE FROM files WHERE path=?", (path,))
            forget_path(db, path)

    def update_stat(self, row: FileRow) -> None:
        """Record new stat fields for a file whose content (hash) did not change. Its chunks the fill
        dropped meanwhile (an edit undone before the next scan: ``dense_queue.FROM_FILE``) are queued again."""
        with self.transaction() as db:
            db.execute("UPDATE files SET mtime_ns=?, size=?, ctime_ns=?, inode=?, dev=? WHERE path=?",
                       (row.mtime_ns, row.size, row.ctime_ns, row.inode, row.dev, row.path))
            _requeue(db, row.path, "live=1")

    def forget_file_version(self, path: str) -> None:
        """Make the next scan redo this file (used when reconciliation finds it incomplete)."""
        with self._lock:
            self._db.execute("UPDATE files SET mtime_ns=-1, file_hash='' WHERE path=?", (path,))

    def mark_error(self, row: FileRow, error: str, *, retain: bool = False) -> None:
        """Record a file that failed (so it is skipped until it changes) without chunks; ``row``
        gives its path and stat fields."""
        with self.transaction() as db:
            _leave_live(db, row.path, retain)
            _put_file(db, FileRow(row.path, row.mtime_ns, row.size, "", error[:500], row.ctime_ns, row.inode,
                                  row.dev), None, None, time.time())
            forget_path(db, row.path)

    def errors(self, limit: int = 20) -> list[tuple[str, str]]:
        with self._lock:
            return self._db.execute(
                "SELECT path, last_error FROM files WHERE last_error IS NOT NULL"
                " ORDER BY last_indexed_at DESC LIMIT ?", (limit,)).fetchall()

    # -- chunks ------------------------------------------------------------------------------
    def chunk_ids(self, *, live: bool | None = None) -> dict[str, str]:
        """point id → path, of every chunk (``live=None``), or only live / retained ones."""
        sql, args = "SELECT c.point_id, p.path FROM chunks c CROSS JOIN paths p ON p.id = c.file", ()
        if live is not None:
            sql, args = sql + " WHERE c.live=?", (int(live),)
        with self._lock:
            return {pid_text(i): path for i, path in self._db.execute(sql, args)}

    def chunks_for(self, path: str) -> list[ChunkRow]:
        """The live (checked-out) chunks of ``path``, in line order."""
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_CHUNK_COLUMNS} FROM chunks WHERE file={FILE} AND live=1 ORDER BY start_line",
                (path,)).fetchall()
        return [_chunk_row(path, r) for r in rows]

    def chunk_at(self, path: str, line: int) -> ChunkRow | None:
        """The smallest live chunk of ``path`` holding ``line``; of two as small, the first in
        ``chunks_for`` order (start line, then row). One indexed lookup, for callers that map a
        few lines of a large file (the search's graph neighbours)."""
        with self._lock:
            row = self._db.execute(
                f"SELECT {_CHUNK_COLUMNS} FROM chunks WHERE file={FILE} AND live=1 AND start_line<=? AND end_line>=?"
                " ORDER BY end_line - start_line, start_line, rowid LIMIT 1", (path, line, line)).fetchone()
        return _chunk_row(path, row) if row else None

    def indexed_files(self) -> dict[str, tuple[str, str | None, str | None]]:
        """path → (file_hash, language, chunk_kind) of every checked-out file indexed without an error."""
        with self._lock:
            rows = self._db.execute(
                "SELECT path, file_hash, language, chunk_kind FROM files WHERE last_error IS NULL").fetchall()
        return {r[0]: (r[1], r[2], r[3]) for r in rows}

    def indexed_file(self, path: str) -> tuple[str, str | None, str | None] | None:
        """``indexed_files()[path]`` without reading the whole table (one row, by primary key)."""
        with self._lock:
            row = self._db.execute("SELECT file_hash, language, chunk_kind FROM files"
                                   " WHERE path=? AND last_error IS NULL", (path,)).fetchone()
        return tuple(row) if row is not None else None

    def chunk_payloads(self, point_ids: list[str]) -> dict[str, dict]:
        """The store payload fields ranking reads, for live chunks found outside the store's lists."""
        out: dict[str, dict] = {}
        with self._lock:
            for start in range(0, len(point_ids), 500):
                asked = stored_ids(point_ids[start:start + 500])
                part = list(asked)
                rows = self._db.execute(
                    "SELECT c.point_id, p.path, c.start_line, c.end_line, c.chunk_hash, c.symbol, c.symbol_kind,"
                    " c.parent_symbol, c.is_fragment, c.file_hash, f.language, f.chunk_kind"
                    " FROM chunks c CROSS JOIN paths p ON p.id = c.file JOIN files f ON f.path = p.path"
                    f" WHERE c.live=1 AND c.point_id IN ({','.join('?' * len(part))})", part).fetchall()
                for r in rows:
                    out[asked[r[0]]] = {
                        "file_path": r[1], "start_line": r[2], "end_line": r[3], "chunk_hash": digest_text(r[4]),
                        "symbol": r[5], "symbol_kind": r[6], "parent_symbol": r[7], "is_fragment": bool(r[8]),
                        "file_hash": digest_text(r[9]), "language": r[10], "chunk_kind": r[11]}
        return out

    def dense_donors(self, path: str) -> list[tuple[str, str, str | None, str | None]]:
        """(point_id, chunk_hash, symbol, parent_symbol) of every embedded chunk of any version of ``path``
        (``+has_dense``: by the path's index; SQLite otherwise walks ``chunks(has_dense)``, every
        embedded chunk of the repository, ~25 ms a file at monorepo size)."""
        with self._lock:
            rows = self._db.execute(
                f"SELECT point_id, chunk_hash, symbol, parent_symbol FROM chunks WHERE file={FILE} AND +has_dense=1",
                (path,)).fetchall()
        return [(pid_text(i), digest_text(h), sym, parent) for i, h, sym, parent in rows]

    def chunk_hashes(self, point_ids: list[str]) -> dict[str, str]:
        """point id → chunk hash (hex) of these chunks, any version (a lean store point keeps none)."""
        with self._lock:
            asked = stored_ids(point_ids)  # the hits of one answer: far fewer than SQLite's parameters
            q = f"SELECT point_id, chunk_hash FROM chunks WHERE point_id IN ({','.join('?' * len(asked))})"
            return {asked[r[0]]: digest_text(r[1]) for r in self._db.execute(q, list(asked))} if asked else {}

    def live_ids(self, point_ids: list[str]) -> set[str]:
        """Which of ``point_ids`` belong to the checked-out version of their file."""
        out: set[str] = set()
        with self._lock:
            for start in range(0, len(point_ids), 500):
                asked = stored_ids(point_ids[start:start + 500])
                q = f"SELECT point_id FROM chunks WHERE live=1 AND point_id IN ({','.join('?' * len(asked))})"
                out.update(asked[r[0]] for r in self._db.execute(q, list(asked)))
        return out

    # -- branches ----------------------------------------------------------------------------
    def version_ids(self, path: str, file_hash: str, *, live: bool) -> list[str]:
        with self._lock:
            return [pid_text(r[0]) for r in self._db.execute(
                f"SELECT point_id FROM chunks WHERE file={FILE} AND file_hash=? AND live=?",
                (path, digest(file_hash), int(live)))]

    def revive(self, row: FileRow, language: str | None, chunk_kind: str | None, *,
               retain_old: bool = False) -> list[str]:
        """Make a retained version of ``row.path`` (same hash) the checked-out one again.

        Returns its point ids, or [] when no such version is kept (then the file must be chunked).
        The file row and the live flag change in one transaction.
        """
        with self.transaction() as db:
            version = (row.path, digest(row.file_hash))
            ids = [pid_text(r[0]) for r in db.execute(
                f"SELECT point_id FROM chunks WHERE file={FILE} AND file_hash=? AND live=0", version)]
            if not ids:
                return []
            _leave_live(db, row.path, retain_old)
            db.execute(f"UPDATE chunks SET live=1 WHERE file={FILE} AND file_hash=?", version)
            _requeue(db, row.path, "file_hash=?", version[1])  # dropped by the fill while not on disk
            _put_file(db, FileRow(row.path, row.mtime_ns, row.size, row.file_hash, None, row.ctime_ns, row.inode,
                                  row.dev), language, chunk_kind, time.time())
        return ids

    def versions_of(self, point_ids: list[str]) -> set[tuple[str, str]]:
        """The (path, file_hash) versions these chunks belong to."""
        out: set[tuple[str, str]] = set()
        with self._lock:
            for start in range(0, len(point_ids), 500):
                part = pids(point_ids[start:start + 500])
                q = ("SELECT DISTINCT p.path, c.file_hash FROM chunks c CROSS JOIN paths p ON p.id = c.file"
                     f" WHERE c.point_id IN ({','.join('?' * len(part))})")
                out.update((r[0], digest_text(r[1])) for r in self._db.execute(q, part))
        return out

    def drop_version(self, path: str, file_hash: str) -> list[str]:
        """Delete a retained (not live) version's chunk rows; returns their point ids."""
        version = (path, digest(file_hash))
        with self.transaction() as db:
            ids = [r[0] for r in db.execute(
                f"SELECT point_id FROM chunks WHERE file={FILE} AND file_hash=? AND live=0", version)]
            db.executemany("DELETE FROM pending_dense WHERE point_id=?", [(i,) for i in ids])
            db.execute(f"DELETE FROM chunks WHERE file={FILE} AND file_hash=? AND live=0", version)
            forget_path(db, path)
        return [pid_text(i) for i in ids]

    def set_branch_file(self, branch: str, path: str, file_hash: str | None) -> None:
        """Record (or with ``None`` forget) the version ``branch`` has of ``path``."""
        with self._lock:
            if file_hash is None:
                self._db.execute("DELETE FROM branch_files WHERE branch=? AND path=?", (branch, path))
            else:
                self._db.execute("INSERT OR REPLACE INTO branch_files(branch, path, file_hash) VALUES(?,?,?)",
                                 (branch, path, file_hash))

    def branches_holding(self, path: str, file_hash: str) -> list[str]:
        with self._lock:
            return [r[0] for r in self._db.execute(
                "SELECT branch FROM branch_files WHERE path=? AND file_hash=? ORDER BY branch", (path, file_hash))]

    def has_branch(self, branch: str) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM branch_files WHERE branch=? LIMIT 1", (branch,)).fetchone() is not None

    def branches(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._db.execute("SELECT DISTINCT branch FROM branch_files ORDER BY branch")]

    def untracked_on(self, branch: str) -> list[tuple[str, str]]:
        """Checked-out files whose version ``branch`` does not list yet: (path, file_hash)."""
        with self._lock:
            return self._db.execute(
                "SELECT f.path, f.file_hash FROM files f LEFT JOIN branch_files b ON b.branch=? AND b.path=f.path"
                " WHERE f.file_hash != '' AND (b.file_hash IS NULL OR b.file_hash != f.file_hash)",
                (branch,)).fetchall()

    def version_tags(self) -> list[tuple[str, str]]:
        """(point_id, branches joined by U+001F) for every chunk: the tag its point should carry."""
        with self._lock:
            rows = self._db.execute(
                "SELECT c.point_id, COALESCE((SELECT group_concat(b.branch, char(31)) FROM branch_files b"
                f" WHERE b.path=p.path AND b.file_hash={hex_sql('c.file_hash')}), '')"
                " FROM chunks c CROSS JOIN paths p ON p.id = c.file").fetchall()
        return [(pid_text(i), tags) for i, tags in rows]

    def set_branch_files(self, branch: str, versions: list[tuple[str, str]]) -> None:
        """Record many (path, file_hash) versions of ``branch`` in one transaction."""
        with self.transaction() as db:
            db.executemany("INSERT OR REPLACE INTO branch_files(branch, path, file_hash) VALUES(?,?,?)",
                           [(branch, p, h) for p, h in versions])

    def branch_versions(self, branch: str) -> list[tuple[str, str]]:
        with self._lock:
            return self._db.execute("SELECT path, file_hash FROM branch_files WHERE branch=?", (branch,)).fetchall()

    def forget_branch(self, branch: str) -> list[tuple[str, str]]:
        """Drop a branch's versions; returns the (path, file_hash) it held."""
        with self.transaction() as db:
            held = db.execute("SELECT path, file_hash FROM branch_files WHERE branch=?", (branch,)).fetchall()
            db.execute("DELETE FROM branch_files WHERE branch=?", (branch,))
        return held

    def unheld_versions(self) -> list[tuple[str, str]]:
        """Retained versions no branch has any more (left behind by a stop mid-prune)."""
        with self._lock:
            version = hex_sql("c.file_hash")
            return self._db.execute(
                f"SELECT DISTINCT p.path, {version} FROM chunks c CROSS JOIN paths p ON p.id = c.file"
                " WHERE c.live=0 AND NOT EXISTS"
                f" (SELECT 1 FROM branch_files b WHERE b.path=p.path AND b.file_hash={version})").fetchall()

    def is_live_version(self, path: str, file_hash: str) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM files WHERE path=? AND file_hash=?", (path, file_hash)).fetchone() is not None

    def counts(self) -> dict[str, int]:
        with self._lock:
            files = self._db.execute("SELECT COUNT(*) FROM files WHERE last_error IS NULL").fetchone()[0]
            failed = self._db.execute("SELECT COUNT(*) FROM files WHERE last_error IS NOT NULL").fetchone()[0]
            chunks, dense = self._db.execute(  # one read; the unembedded by their partial index (empty once filled)
                "SELECT COUNT(*), COUNT(*) - (SELECT COUNT(*) FROM chunks WHERE has_dense=0) FROM chunks").fetchone()
        return {"files": files, "files_failed": failed, "chunks": chunks, "chunks_dense": dense}

    def clear(self) -> None:
        with self.transaction() as db:
            for table in ("files", "chunks", "pending_dense", "branch_files", "paths"):
                db.execute(f"DELETE FROM {table}")
            db.execute("DELETE FROM meta WHERE key NOT IN ('schema_version')")


@dataclass(frozen=True, slots=True)
class NewFile:
    """A file version to record (``Manifest.add_files``): its row, language and kind, its chunks,
    their compressed index texts (``dense_queue.pack``), its dense queue key."""

    row: FileRow
    language: str | None
    chunk_kind: str | None
    chunks: list[ChunkRow]
    packed: list[bytes]
    fill_order: int = -1


def _put_file(db: sqlite3.Connection, row: FileRow, language: str | None, chunk_kind: str | None,
              now: float) -> None:
    """Insert or replace ``row`` in the files table."""
    db.execute(
        "INSERT OR REPLACE INTO files(path, mtime_ns, size, file_hash, language, chunk_kind, last_indexed_at,"
        " last_error, ctime_ns, inode, dev) VALUES(?,?,?,?,?,?,?,?,?,?,?)",
        (row.path, row.mtime_ns, row.size, row.file_hash, language, chunk_kind, now, row.last_error,
         row.ctime_ns, row.inode, row.dev))


def _put_files(db: sqlite3.Connection, files: list[NewFile], now: float, *, dense_done: bool = False,
               embedded: set[str] | frozenset[str] = frozenset()) -> None:
    """Insert or replace each file's row and chunks, and queue its chunks for dense vectors (but
    ``embedded`` ones, or none with ``dense_done``): a statement per table for all of them."""
    db.executemany(
        "INSERT OR REPLACE INTO files(path, mtime_ns, size, file_hash, language, chunk_kind, last_indexed_at,"
        " last_error, ctime_ns, inode, dev) VALUES(?,?,?,?,?,?,?,?,?,?,?)",
        [(f.row.path, f.row.mtime_ns, f.row.size, f.row.file_hash, f.language, f.chunk_kind, now,
          f.row.last_error, f.row.ctime_ns, f.row.inode, f.row.dev) for f in files])
    ids = path_ids(db, {c.path for f in files for c in f.chunks})
    db.executemany(
        "INSERT OR REPLACE INTO chunks(point_id, file, chunk_idx, start_line, end_line, chunk_hash,"
        " symbol, symbol_kind, parent_symbol, is_fragment, has_dense, file_hash, live)"
        " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,1)",
        [(pid(c.point_id), ids[c.path], c.chunk_idx, c.start_line, c.end_line, digest(c.chunk_hash), c.symbol,
          c.symbol_kind, c.parent_symbol, int(c.is_fragment), int(dense_done or c.point_id in embedded),
          digest(f.row.file_hash)) for f in files for c in f.chunks])
    if not dense_done:
        db.executemany("INSERT OR REPLACE INTO pending_dense(point_id, text, fill_order) VALUES(?,?,?)",
                       [(pid(c.point_id), t, f.fill_order) for f in files for c, t in zip(f.chunks, f.packed)
                        if c.point_id not in embedded])


def _requeue(db: sqlite3.Connection, path: str, which: str, *args) -> None:
    """Queue (text read from the file: ``FROM_FILE``) the chunks of ``path`` matching ``which`` that
    have no dense vector and are not queued: the fill drops a chunk whose lines are not on disk.
    ``+has_dense`` keeps SQLite on the path's index, not ``chunks(has_dense)`` (every unembedded
    chunk: ~23 ms a file on the monorepo mid-fill)."""
    db.execute("INSERT OR IGNORE INTO pending_dense(point_id, text) SELECT point_id, ? FROM chunks"
               f" WHERE file={FILE} AND {which} AND +has_dense=0", (FROM_FILE, path, *args))


def _leave_live(db: sqlite3.Connection, path: str, retain: bool) -> None:
    """The checked-out version of ``path`` stops being live: kept as retained, or deleted."""
    if retain:
        db.execute(f"UPDATE chunks SET live=0 WHERE file={FILE} AND live=1", (path,))
    else:
        _drop_live(db, path)


def _drop_live(db: sqlite3.Connection, path: str) -> None:
    """Delete the checked-out version's chunk rows of ``path`` and their dense queue entries."""
    db.execute("DELETE FROM pending_dense WHERE point_id IN"
               f" (SELECT point_id FROM chunks WHERE file={FILE} AND live=1)", (path,))
    db.execute(f"DELETE FROM chunks WHERE file={FILE} AND live=1", (path,))

