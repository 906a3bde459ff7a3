"""The symbol graph's tables, kept in the workspace's manifest database file.

The graph has its own connection to the same SQLite file (WAL: readers never block the indexer)
and its own `graph_*` tables, so the manifest's schema and its transactions stay untouched. Rows
are replaced per file (delete the path's rows, insert the new ones); the indexer's files are queued
and written ``QUEUE_FILES`` at a time, one transaction each (``GraphStore.queue``).
"""
from __future__ import annotations

import logging
import sqlite3
import threading
import uuid
from collections.abc import Iterable
from itertools import repeat
from pathlib import Path

from ..errors import IndexDamaged
from ..storage.damage import CheckedConnection
from ..storage.manifest_schema import drop_whole_index, use_wal
from . import migrate_postings, postings
from .migrate_symbols import QUALNAME, symbol_row
from .file_index import FileIndex
from .model import Edge, FileGraph, Import, Ref, Symbol
from .packing import Uses, UsesCache, kind_bits, pack_terms, to_ref, unpack_imports, unpack_terms, used_names
from .rows import FileRows, file_rows, pack

log = logging.getLogger("probe.intel")

GRAPH_VERSION = "10"  # bump when extraction or the layout changes: stored graphs are then rebuilt
# (layouts 7 to 9 are converted in place instead: ``migrate.py``, ``migrate_symbols.py``,
# ``migrate_postings.py``)

# Compact by design (a 2.9M-line monorepo's uses took 158 MB as rows with two indexes, 1.7× the
# source): a file's uses are one compressed row of `graph_uses` (``packing.py``, with its imports),
# found through `graph_refs`, a posting list name → files with a bit per kind of use.
# `graph_postings` is the word index the exact-match lists read (``retrieval/term_index.py``): one
# row per word, the files holding it packed (``postings.py``), and each file's own term ids in
# `graph_files.terms` (``packing.pack_terms``) so that replacing a file takes it out of exactly its lists.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS graph_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS graph_files (
    id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, file_hash TEXT NOT NULL, language TEXT,
    lines INTEGER NOT NULL, terms BLOB
);
CREATE TABLE IF NOT EXISTS graph_symbols (
    id INTEGER PRIMARY KEY, file INTEGER NOT NULL, name TEXT NOT NULL, qualname TEXT,
    kind TEXT NOT NULL, line INTEGER NOT NULL, end_line INTEGER NOT NULL, signature TEXT,
    doc TEXT, parent TEXT
);
CREATE INDEX IF NOT EXISTS graph_symbols_name ON graph_symbols(name);
CREATE INDEX IF NOT EXISTS graph_symbols_file ON graph_symbols(file, line);
-- most symbols have no parent (top-level: 70 % on the monorepo), and a look-up by parent implies one
CREATE INDEX IF NOT EXISTS graph_symbols_parent ON graph_symbols(parent) WHERE parent IS NOT NULL;
CREATE TABLE IF NOT EXISTS graph_names (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS graph_refs (
    name INTEGER NOT NULL, file INTEGER NOT NULL, kind INTEGER NOT NULL, PRIMARY KEY (name, file)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS graph_uses (file INTEGER PRIMARY KEY, uses BLOB NOT NULL, imports BLOB);
CREATE TABLE IF NOT EXISTS graph_edges (
    path TEXT NOT NULL, line INTEGER NOT NULL, child TEXT NOT NULL, parent TEXT NOT NULL,
    kind TEXT NOT NULL, parent_qualifier TEXT
);
CREATE INDEX IF NOT EXISTS graph_edges_parent ON graph_edges(parent);
CREATE INDEX IF NOT EXISTS graph_edges_child ON graph_edges(child);
CREATE INDEX IF NOT EXISTS graph_edges_path ON graph_edges(path);
CREATE TABLE IF NOT EXISTS graph_terms (id INTEGER PRIMARY KEY, term BLOB NOT NULL UNIQUE);
""" + postings.SCHEMA
_ALL_TABLES = ("graph_files", "graph_symbols", "graph_names", "graph_refs", "graph_uses", "graph_edges",
               "graph_imports", "graph_terms", "graph_postings")
# A symbol names its file by id, its qualname NULL when derived (``migrate_symbols.py``); CROSS JOIN
# keeps the symbols the outer loop: rows come in the order they did with the path in the row.
_SYMBOL_COLUMNS = f"s.id, f.path, s.name, {QUALNAME}, s.kind, s.line, s.end_line, s.signature, s.doc, s.parent, f.language"
_SYMBOL_FROM = f"SELECT {_SYMBOL_COLUMNS} FROM graph_symbols s CROSS JOIN graph_files f ON f.id = s.file"
_BATCH_IDS = 500  # host parameters per IN (...)
_UNPACK_FILES = 64  # files read at a time by refs_named (it stops at its limit)
QUEUE_FILES = 1000  # files the indexer's per-file updates are written in one transaction with
# (a transaction per 200 files rewrote the word postings' pages 5× as often: the monorepo's graph
# writes took 17 CPU-s, 13 with 1000)


def _symbol(row) -> Symbol:
    return Symbol(id=row[0], path=row[1], name=row[2], qualname=row[3], kind=row[4], line=row[5],
                  end_line=row[6], signature=row[7] or "", doc=row[8] or "", parent=row[9],
                  language=row[10] or "")


class _Known:
    """The ids of a string table's every row, and its last id (``GraphStore._ids``)."""

    __slots__ = ("ids", "top")

    def __init__(self) -> None:
        self.ids: dict = {}
        self.top = 0


class GraphStore:
    """Reads and writes the graph tables. Safe to share between threads of one process."""

    def __init__(self, db_path: Path):
        self.path = Path(db_path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        raw = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None, timeout=30)
        self._db = CheckedConnection(raw, self.path)  # corruption → IndexDamaged, recorded for status
        use_wal(self._db)
        self._lock = threading.RLock()
        self.changes = 0  # counts this connection's writes (the process owning the workspace is the only writer)
        self.in_step: tuple | None = None  # build.ensure_graph's key when the graph last matched the manifest
        self._index: tuple[tuple[int, int], FileIndex] | None = None
        self._unpacked = UsesCache()
        self._known: dict[str, _Known] = {}  # table → its id map, while a graph is built from empty (``_ids``)
        self._queued: list[tuple[FileGraph, str, set[bytes] | None]] = []
        with self._lock:
            self._db.execute("CREATE TABLE IF NOT EXISTS graph_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            version = self._db.execute("SELECT value FROM graph_meta WHERE key='version'").fetchone()
            if version is not None and version[0] in migrate_postings.OLDER:
                self._migrate()
                version = self._db.execute("SELECT value FROM graph_meta WHERE key='version'").fetchone()
            if version is None or version[0] != GRAPH_VERSION:  # an older layout: rebuilt lazily
                for table in _ALL_TABLES:
                    self._db.execute(f"DROP TABLE IF EXISTS {table}")
                self._db.execute("INSERT OR REPLACE INTO graph_meta(key, value) VALUES('version', ?)",
                                 (GRAPH_VERSION,))
                # term ids restart with a new table: the in-memory vocabulary keys on this
                self._db.execute("INSERT OR REPLACE INTO graph_meta(key, value) VALUES('terms_epoch', ?)",
                                 (uuid.uuid4().hex,))
            drop_whole_index(self._db, "graph_symbols_parent")  # made whole before
            self._db.executescript(_SCHEMA)

    def _migrate(self) -> None:
        """The layouts before packed uses (7), before symbols by file id (8) and before packed word
        postings (9), converted in place, one step after the other; when a step fails the graph is
        left as it was, to be dropped and made again from the files like any older layout."""
        try:
            migrate_postings.in_place(self._db, _SCHEMA, GRAPH_VERSION)
        except IndexDamaged:
            raise
        except Exception:  # noqa: BLE001 - a full disk, a garbled row: rebuilding from the files still works
            log.warning("converting the symbol graph in place failed; it is built again", exc_info=True)

    def close(self) -> None:
        with self._lock:
            try:
                self.flush()
            finally:
                self._db.close()

    # -- writing -----------------------------------------------------------------------------
    def queue(self, graph: FileGraph | FileRows, file_hash: str, words: set[bytes] | None) -> None:
        """``replace_files`` of one file, written with up to ``QUEUE_FILES - 1`` others in one
        transaction: a commit per file rewrote every page the file's word postings touched (the
        symbol graph doubled a full index's CPU time). Every read, and every other write, writes
        the queue first, so nothing reads around it; a crash loses it, and ``ensure_graph`` (which
        compares the graph with the manifest) graphs those files again."""
        with self._lock:
            self._queued.append((graph, file_hash, words))
            if len(self._queued) >= QUEUE_FILES:
                self.flush()

    def flush(self) -> None:
        """Write the queued files (dropped, not retried, when that fails: ``ensure_graph`` repairs)."""
        with self._lock:
            queued, self._queued = self._queued, []
            if queued:
                try:
                    self._replace(queued)
                except Exception:  # noqa: BLE001 - a graph write must not fail a read or the indexer
                    log.warning("writing %d queued symbol graph files failed", len(queued), exc_info=True)

    def replace_files(self, graphs: Iterable[tuple[FileGraph | FileRows, str, set[bytes] | None]]) -> None:
        """Store each (graph, file_hash, words of its text), replacing everything previously known
        about its path (``words`` None: the file gets no postings, and search scans its text)."""
        with self._lock:
            self.flush()
            self._replace(list(graphs))

    def _replace(self, graphs: list[tuple[FileGraph | FileRows, str, set[bytes] | None]]) -> None:
        graphs = list({g.path: (g, h, w) for g, h, w in graphs}.values())  # a path queued twice: the last
        rows = [(g if isinstance(g, FileRows) else file_rows(g), h, w) for g, h, w in graphs]
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                names = self._ids("graph_names", "name", set().union(*(f.names for f, _, _ in rows)))
                old_top = self._db.execute("SELECT max(id) FROM graph_terms").fetchone()[0] or 0
                terms = self._ids("graph_terms", "term", set().union(*(words for _, _, words in rows if words)))
                added: list[tuple[int, list[int]]] = []  # (file id, its term ids): the lists' changes
                removed: list[tuple[int, list[int]]] = []
                posted: list[tuple[int, int, int]] = []
                for f, file_hash, words in rows:
                    self._delete(f.path, removed)
                    ids = None if words is None else sorted(map(terms.__getitem__, words))
                    file_id = self._insert(f, file_hash, names, ids, posted)
                    if ids:
                        added.append((file_id, ids))
                postings.apply(self._db, added, removed, old_top)
                posted.sort()  # in key order: the inserts walk the B-tree once instead of jumping about it
                self._db.executemany("INSERT INTO graph_refs(name, file, kind) VALUES(?,?,?)", posted)
            except BaseException:
                self._known.clear()  # may hold ids the rollback took back
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            self.changes += 1

    def remove_files(self, paths: Iterable[str]) -> None:
        with self._lock:
            self.flush()
            self._db.execute("BEGIN IMMEDIATE")
            try:
                removed: list[tuple[int, list[int]]] = []
                for path in paths:
                    self._delete(path, removed)
                postings.apply(self._db, [], removed)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            self.changes += 1

    def _ids(self, table: str, column: str, values: set) -> dict:
        """value → id in a string table (``graph_names``, ``graph_terms``), adding the new ones
        (the map returned may hold more values). A graph built from empty keeps each table's map
        in memory (``_Known``), checked against the table's last id: a new monorepo's 3M lookups
        of words and names are then a dict's, not SQLite's."""
        if not values:
            return {}
        db = self._db
        top = db.execute(f"SELECT max(id) FROM {table}").fetchone()[0] or 0
        known = self._known.get(table)
        if known is None or known.top != top:
            known = self._known[table] = _Known() if top == 0 else None
            if known is None:
                self._known.pop(table, None)
                return self._ids_sql(table, column, values)
        new = sorted(v for v in values if v not in known.ids)
        if new:  # the ids SQLite gives rows inserted in this order: one past the last, in turn
            added = range(top + 1, top + 1 + len(new))
            db.executemany(f"INSERT INTO {table}(id, {column}) VALUES(?,?)", zip(added, new))
            known.ids.update(zip(new, added))
            known.top = added[-1]
        return known.ids

    def forget_ids(self) -> None:
        """Let go of the in-memory id maps (``_ids``) once a bulk build is written."""
        with self._lock:
            self.flush()
            self._known.clear()

    def _ids_sql(self, table: str, column: str, values: set) -> dict:
        db, values = self._db, sorted(values)
        db.executemany(f"INSERT OR IGNORE INTO {table}({column}) VALUES(?)", [(v,) for v in values])
        out = {}
        for start in range(0, len(values), _BATCH_IDS):
            part = values[start:start + _BATCH_IDS]
            out.update((v, i) for i, v in db.execute(
                f"SELECT id, {column} FROM {table} WHERE {column} IN ({','.join('?' * len(part))})", part))
        return out

    def _delete(self, path: str, removed: list[tuple[int, list[int]]]) -> None:
        """Delete the rows of ``path`` but its postings: (its file id, its term ids) goes to ``removed``."""
        db = self._db
        row = db.execute("SELECT id, terms FROM graph_files WHERE path=?", (path,)).fetchone()
        if row is not None:
            file_id, terms = row
            uses = db.execute("SELECT uses FROM graph_uses WHERE file=?", (file_id,)).fetchone()
            if uses is not None:
                db.executemany("DELETE FROM graph_refs WHERE name=? AND file=?",
                               [(n, file_id) for n in sorted(used_names(uses[0]))])
                db.execute("DELETE FROM graph_uses WHERE file=?", (file_id,))
            if terms:
                removed.append((file_id, unpack_terms(terms)))
            db.execute("DELETE FROM graph_files WHERE id=?", (file_id,))
            db.execute("DELETE FROM graph_symbols WHERE file=?", (file_id,))
        db.execute("DELETE FROM graph_edges WHERE path=?", (path,))

    def _insert(self, f: FileRows, file_hash: str, names: dict[str, int], terms: list[int] | None,
                posted: list[tuple[int, int, int]]) -> int:
        """The file's rows but its postings (the caller writes a batch's postings and uses' posting
        entries, ``posted``, at once); its id."""
        db = self._db
        blob = None if terms is None else pack_terms(terms)
        file_id = db.execute("INSERT INTO graph_files(path, file_hash, language, lines, terms) VALUES(?,?,?,?,?)",
                             (f.path, file_hash, f.language, f.lines, blob)).lastrowid
        db.executemany(
            "INSERT INTO graph_symbols(file, name, qualname, kind, line, end_line, signature, doc, parent)"
            " VALUES(?,?,?,?,?,?,?,?,?)", [(file_id,) + symbol_row(s) for s in f.symbols])
        uses, entries = pack(f, names)
        if f.uses or f.imports:
            db.execute("INSERT INTO graph_uses(file, uses, imports) VALUES(?,?,?)", (file_id, uses, f.imports))
        posted.extend(zip(entries, repeat(file_id), entries.values()))
        db.executemany(
            "INSERT INTO graph_edges(path, line, child, parent, kind, parent_qualifier) VALUES(?,?,?,?,?,?)", f.edges)
        return file_id

    # -- reading -----------------------------------------------------------------------------
    def _rows(self, sql: str, args: tuple = ()) -> list[tuple]:
        with self._lock:
            if self._queued:
                self.flush()
            return self._db.execute(sql, args).fetchall()

    def file_hashes(self) -> dict[str, str]:
        return dict(self._rows("SELECT path, file_hash FROM graph_files"))

    def out_of_step(self) -> tuple[dict[str, str], list[str]]:
        """What the graph lacks against the manifest (same database file), compared in SQL: path →
        file_hash of indexed files graphed at another version or not at all, and graphed paths the
        manifest no longer indexes."""
        stale = dict(self._rows(
            "SELECT f.path, f.file_hash FROM files f LEFT JOIN graph_files g ON g.path = f.path"
            " WHERE f.file_hash != '' AND f.last_error IS NULL AND (g.file_hash IS NULL OR g.file_hash != f.file_hash)"))
        gone = [r[0] for r in self._rows(
            "SELECT g.path FROM graph_files g LEFT JOIN files f ON f.path = g.path AND f.file_hash != ''"
            " AND f.last_error IS NULL WHERE f.path IS NULL")]
        return stale, gone

    def file_index(self) -> FileIndex:
        """The graphed files by path, directory and path tail, rebuilt only after a write."""
        with self._lock:
            self.flush()
            # data_version moves when another connection (another process) commits to the file
            key = (self.changes, self._db.execute("PRAGMA data_version").fetchone()[0])
            if self._index is None or self._index[0] != key:
                self._index = (key, FileIndex(self.files()))
            return self._index[1]

    def files(self) -> list[tuple[str, str | None, int]]:
        """(path, language, lines) of every graphed file, by path."""
        return self._rows("SELECT path, language, lines FROM graph_files ORDER BY path")

    def line_count(self, path: str) -> int | None:
        """Lines of a graphed file (None when it is not in the graph)."""
        rows = self._rows("SELECT lines FROM graph_files WHERE path=?", (path,))
        return rows[0][0] if rows else None

    def symbols_named(self, name: str, *, limit: int | None = None) -> list[Symbol]:
        """Definitions of ``name`` (the first ``limit``: a common name has thousands in a monorepo)."""
        sql = _SYMBOL_FROM + " WHERE s.name=?" + (" LIMIT ?" if limit is not None else "")
        return [_symbol(r) for r in self._rows(sql, (name,) + ((limit,) if limit is not None else ()))]

    def symbols_in(self, path: str) -> list[Symbol]:
        return [_symbol(r) for r in self._rows(
            f"SELECT {_SYMBOL_COLUMNS} FROM graph_files f JOIN graph_symbols s ON s.file = f.id"
            " WHERE f.path=? ORDER BY s.line",
            (path,))]

    def symbols_with_parent(self, parents: Iterable[str]) -> list[Symbol]:
        parents = list(parents)
        if not parents:
            return []
        marks = ",".join("?" * len(parents))
        return [_symbol(r) for r in self._rows(_SYMBOL_FROM + f" WHERE s.parent IN ({marks})", tuple(parents))]

    def symbols_of_kind(self, kinds: Iterable[str], language: str | None = None) -> list[Symbol]:
        kinds = list(kinds)
        marks = ",".join("?" * len(kinds))
        sql = _SYMBOL_FROM + f" WHERE s.kind IN ({marks})"
        args: tuple = tuple(kinds)
        if language:
            sql += " AND f.language=?"
            args += (language,)
        return [_symbol(r) for r in self._rows(sql, args)]

    def refs_named(self, name: str, kinds: Iterable[str] | None = None, *, limit: int | None = None) -> list[Ref]:
        """Uses of ``name`` by path and line (the first ``limit`` of them): the files the posting
        list names are unpacked in path order until ``limit`` uses are found."""
        bits = kind_bits(kinds or None)
        found: list[tuple[str, tuple]] = []
        if limit is not None and limit <= 0:
            return []
        with self._lock:
            if self._queued:
                self.flush()
            self._unpacked.fresh(self._state())
            # each file posted with a kind asked for holds a use of it: ``limit`` files are enough
            files = self._db.execute(
                "SELECT r.name, r.file, f.path FROM graph_refs r JOIN graph_files f ON f.id = r.file"
                " WHERE r.name = (SELECT id FROM graph_names WHERE name=?) AND r.kind & ? ORDER BY f.path LIMIT ?",
                (name, bits, limit or -1)).fetchall()
            if not files:
                return []
            name_id = files[0][0]
            files = [(f, path) for _, f, path in files]
            start = 0
            while start < len(files):
                step = _UNPACK_FILES if limit is None else min(_UNPACK_FILES, limit - len(found))
                part, start = files[start:start + step], start + step
                unpacked = self._unpacked.get(self._db, [f for f, _ in part])
                for file_id, path in part:
                    uses = unpacked.get(file_id)
                    if uses is None:
                        continue
                    rows = [r for r in uses.rows(uses.positions_of(name_id)) if (1 << r[3]) & bits]
                    rows.sort(key=lambda r: (r[2], r[3], r[0]))  # by line; a line's as an index (name, kind) gave them
                    found.extend((path, r) for r in rows)
                if limit is not None and len(found) >= limit:
                    del found[limit:]
                    break
            names = self._names({i for _, r in found for i in (r[1], r[4], r[5]) if i})
        return [to_ref(path, r, names) for path, r in found]

    def files_using(self, name: str, kinds: Iterable[str] | None = None, *, limit: int) -> int:
        """How many files use ``name`` (as one of ``kinds``), counted up to ``limit``: each such file
        holds a use, so a count past N says "more than N uses" without reading them (``refs_named``
        with a limit sorts every file of a common name by path first)."""
        return self._rows("SELECT count(*) FROM (SELECT 1 FROM graph_refs WHERE name = (SELECT id FROM graph_names"
                          " WHERE name=?) AND kind & ? LIMIT ?)", (name, kind_bits(kinds or None), limit))[0][0]

    def refs_in(self, path: str, start: int, end: int, kinds: Iterable[str] = ("call",)) -> list[Ref]:
        """Uses on lines ``start``..``end`` of ``path``, by line."""
        bits = kind_bits(kinds)
        with self._lock:
            if self._queued:
                self.flush()
            self._unpacked.fresh(self._state())
            ids = self._unpacked.file_ids
            if path not in ids:
                row = self._db.execute("SELECT id FROM graph_files WHERE path=?", (path,)).fetchone()
                ids[path] = row[0] if row else None
            file_id = ids[path]
            uses = self._unpacked.get(self._db, [file_id]).get(file_id) if file_id is not None and bits else None
            if uses is None:
                return []
            found = [r for r in uses.rows(uses.between(start, end)) if (1 << r[3]) & bits]
            names = self._names({i for r in found for i in (r[1], r[4], r[5]) if i})
        return [to_ref(path, r, names) for r in found]

    def _state(self) -> tuple[int, int]:
        """Moves with every write, this connection's or another process's (under the lock)."""
        return self.changes, self._db.execute("PRAGMA data_version").fetchone()[0]

    def _names(self, ids: set[int]) -> dict[int, str]:
        """id → name of ``graph_names`` rows (under the lock, after ``self._unpacked.fresh``)."""
        known = self._unpacked.names
        missing = sorted(i for i in ids if i not in known)
        for start in range(0, len(missing), _BATCH_IDS):
            part = missing[start:start + _BATCH_IDS]
            known.update(self._db.execute(
                f"SELECT id, name FROM graph_names WHERE id IN ({','.join('?' * len(part))})", part))
        return {i: known[i] for i in ids}  # read after the lock is let go: not the shared map

    def imports_of(self, path: str) -> list[Import]:
        rows = self._rows("SELECT u.imports FROM graph_uses u JOIN graph_files f ON f.id = u.file WHERE f.path=?",
                          (path,))
        return unpack_imports(path, rows[0][0]) if rows else []

    def edges_to(self, parent: str, *, limit: int | None = None) -> list[Edge]:
        return [Edge(*r) for r in self._rows(
            "SELECT path, line, child, parent, kind, parent_qualifier FROM graph_edges WHERE parent=?"
            + (" LIMIT ?" if limit is not None else ""), (parent,) + ((limit,) if limit is not None else ()))]

    def edges_from(self, child: str) -> list[Edge]:
        return [Edge(*r) for r in self._rows(
            "SELECT path, line, child, parent, kind, parent_qualifier FROM graph_edges WHERE child=?", (child,))]

    def edges_of_kind(self, kind: str) -> list[Edge]:
        return [Edge(*r) for r in self._rows(
            "SELECT path, line, child, parent, kind, parent_qualifier FROM graph_edges WHERE kind=?", (kind,))]

    # -- word postings (read by retrieval/term_index.py) ---------------------------------------
    def terms_epoch(self) -> str:
        """Changes when the term table is made anew (its ids restart)."""
        rows = self._rows("SELECT value FROM graph_meta WHERE key='terms_epoch'")
        return rows[0][0] if rows else ""

    def terms_after(self, last_id: int) -> list[tuple[int, bytes]]:
        """(id, word) of the vocabulary's words added after ``last_id`` (ids only grow)."""
        return self._rows("SELECT id, term FROM graph_terms WHERE id > ? ORDER BY id", (last_id,))

    def posted_files(self, groups: list[list[int]]) -> list[tuple[str, str, str | None, str | None]]:
        """(path, file_hash, language, chunk_kind) of the manifest's indexed files whose posted
        version is the indexed one and that hold a word of every group (no group: every such file).
        Joins the manifest's ``files`` table, which lives in the same database file."""
        with self._lock:
            if self._queued:
                self.flush()
            return postings.posted_files(self._db, groups)

    def unposted_files(self) -> list[tuple[str, str, str | None, str | None]]:
        """The manifest's indexed files whose indexed version has no postings (graphing it failed,
        or has not happened yet): search scans their text."""
        return self._rows(
            "SELECT f.path, f.file_hash, f.language, f.chunk_kind FROM files f LEFT JOIN graph_files g"
            " ON g.path = f.path AND g.file_hash = f.file_hash"
            " WHERE f.last_error IS NULL AND (g.id IS NULL OR g.terms IS NULL) ORDER BY f.path")

    def counts(self) -> dict[str, int]:
        out = {}
        for table in ("graph_symbols", "graph_edges", "graph_files"):
            out[table.removeprefix("graph_")] = self._rows(f"SELECT COUNT(*) FROM {table}")[0][0]
        packed = self._rows("SELECT f.path, u.uses, u.imports FROM graph_uses u JOIN graph_files f ON f.id = u.file")
        out["refs"] = sum(Uses(uses).n for _, uses, _ in packed)
        out["imports"] = sum(len(unpack_imports(path, imports)) for path, _, imports in packed)
        return out
