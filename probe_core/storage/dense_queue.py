"""The manifest's dense queue: chunk text waiting for its dense vector (progressive indexing).

A part of ``Manifest`` (a mixin over its connection and lock), kept apart because it is the one
table that drains: a lexical-only index of a large repository queues about its whole source, and
the fill empties it. The text is stored zlib-compressed, or not at all (``FROM_FILE``) when it is the
chunk's lines of its file: the fill reads them again and checks them against the chunk's hash
(``indexing/dense.py``); a chunk whose lines have changed since is dropped from the queue (its
file's next index queues the new version; a version found on disk again, revived for a branch or
a file edited back, is queued again). On the 2.9M-line monorepo the texts were 65 MB of a 250 MB
manifest. As the queue drains, the pages it frees
are given back to the file system (a manifest made with ``auto_vacuum=INCREMENTAL``,
``manifest_schema.create_or_migrate``), so a fully embedded index does not keep the queue's size.
"""
from __future__ import annotations

import zlib

from .manifest_codec import FILE, digest_text, pid_text, pids, stored_ids

# a queued text that is not stored: the chunk's lines of its file, read again by the fill
FROM_FILE = b""

# free pages (4 KiB each) the manifest may hold before the fill gives them back: trimming in steps
# of at least this keeps the cost of each step small against the embedding it follows
TRIM_FREE_PAGES = 1024


class DenseQueue:
    """The queue's reads and writes; ``Manifest`` supplies ``_db``, ``_lock`` and ``transaction``."""

    def pending_dense(self, limit: int) -> list[tuple[str, str, str | None]]:
        """(point_id, path, text) of chunks still waiting for dense vectors, in fill order
        (``indexing/fill_order.py``), then in the order they were queued. ``text`` is None for a
        chunk whose lines are read again from its file (``FROM_FILE``, ``queued_spans``)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT p.point_id, pa.path, p.text FROM pending_dense p CROSS JOIN chunks c ON c.point_id = p.point_id"
                " CROSS JOIN paths pa ON pa.id = c.file ORDER BY p.fill_order, p.rowid LIMIT ?", (limit,)).fetchall()
        return [(pid_text(pid), path, unpack(text)) for pid, path, text in rows]

    def queued_spans(self, point_ids: list[str]) -> dict[str, tuple[str, int, int, str | None, str | None, str]]:
        """point id → (path, start_line, end_line, symbol, parent_symbol, chunk_hash) of these chunks:
        where the fill finds a ``FROM_FILE`` text, and the hash the lines it reads must have."""
        out: dict = {}
        with self._lock:
            for start in range(0, len(point_ids), 500):
                part = pids(point_ids[start:start + 500])
                out.update((pid_text(r[0]), r[1:6] + (digest_text(r[6]),)) for r in self._db.execute(
                    "SELECT c.point_id, p.path, c.start_line, c.end_line, c.symbol, c.parent_symbol, c.chunk_hash"
                    " FROM chunks c CROSS JOIN paths p ON p.id = c.file"
                    f" WHERE c.point_id IN ({','.join('?' * len(part))})", part))
        return out

    def drop_pending(self, point_ids: list[str]) -> None:
        """Take chunks off the queue without a vector: their lines are no longer on disk."""
        with self.transaction() as db:
            db.executemany("DELETE FROM pending_dense WHERE point_id=?", [(i,) for i in pids(point_ids)])

    def unranked_pending(self) -> list[tuple[str, str | None, int]]:
        """(path, chunk_kind, mtime_ns) of the files with queued chunks that have no fill order yet."""
        with self._lock:
            return self._db.execute(
                "SELECT DISTINCT pa.path, f.chunk_kind, COALESCE(f.mtime_ns, 0) FROM pending_dense p"
                " JOIN chunks c ON c.point_id = p.point_id JOIN paths pa ON pa.id = c.file"
                " LEFT JOIN files f ON f.path = pa.path WHERE p.fill_order = -1").fetchall()

    def set_fill_order(self, orders: list[tuple[int, str]]) -> None:
        """Give the unranked queued chunks of each path its fill order: ``[(fill_order, path)]``."""
        with self.transaction() as db:
            # by point id through chunks(path): the unary + keeps the planner off the fill_order index
            # (every row is unranked at first: that would scan the whole queue per path)
            db.executemany("UPDATE pending_dense SET fill_order=? WHERE point_id IN"
                           f" (SELECT point_id FROM chunks WHERE file={FILE}) AND +fill_order=-1", orders)

    def without_dense(self, point_ids: list[str]) -> set[str]:
        """Those of these chunks that have no dense vector yet (search while the fill runs)."""
        out: set[str] = set()
        with self._lock:
            for start in range(0, len(point_ids), 500):
                asked = stored_ids(point_ids[start:start + 500])
                # by primary key: the unary + keeps the planner off the ``has_dense`` index, which it
                # took and which, mid-fill, walks every chunk without a vector (~60 ms a search on the
                # monorepo's 137k chunks at 4.9 % coverage, ``docs/benchmarks.md`` "The dense leg")
                out.update(asked[r[0]] for r in self._db.execute(
                    f"SELECT point_id FROM chunks WHERE +has_dense=0 AND point_id IN ({','.join('?' * len(asked))})",
                    list(asked)))
        return out

    def mark_dense_done(self, point_ids: list[str]) -> None:
        with self.transaction() as db:
            stored = [(i,) for i in pids(point_ids)]
            db.executemany("DELETE FROM pending_dense WHERE point_id=?", stored)
            db.executemany("UPDATE chunks SET has_dense=1 WHERE point_id=?", stored)
        self.trim()

    def trim(self, at_least: int = TRIM_FREE_PAGES) -> int:
        """Give free pages back to the file system once there are ``at_least`` of them (a manifest
        without incremental auto-vacuum keeps them: nothing happens). Returns the pages freed."""
        with self._lock:
            free = self._db.execute("PRAGMA freelist_count").fetchone()[0]
            if free < max(at_least, 1) or self._db.execute("PRAGMA auto_vacuum").fetchone()[0] != 2:
                return 0
            # executescript steps the pragma to its end (a plain execute frees one page per step)
            self._db.executescript(f"PRAGMA incremental_vacuum({int(free)});")
            return free - self._db.execute("PRAGMA freelist_count").fetchone()[0]


def pack(text: str) -> bytes:
    return zlib.compress(text.encode("utf-8", "surrogatepass"), 6)


def unpack(stored: str | bytes) -> str | None:
    """A queued text: compressed (bytes), plain from a manifest written before compression, or None
    (``FROM_FILE``: read from the file)."""
    if stored == FROM_FILE:
        return None
    return zlib.decompress(stored).decode("utf-8", "surrogatepass") if isinstance(stored, bytes) else stored
