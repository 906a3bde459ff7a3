"""The symbol graph's tables, kept in the workspace's manifest database file.

The graph has its own connection to the same SQLite file (WAL: readers never block the indexer)
and its own `graph_*` tables, so the manifest's schema and its transactions stay untouched. Rows
are replaced per file (delete the path's rows, insert the new ones) in one transaction.
"""
from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path

from .model import Edge, FileGraph, Import, Ref, Symbol

GRAPH_VERSION = "6"  # bump when extraction changes: stored graphs are then rebuilt

_SCHEMA = """
CREATE TABLE IF NOT EXISTS graph_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS graph_files (
    path TEXT PRIMARY KEY, file_hash TEXT NOT NULL, language TEXT, lines INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS graph_symbols (
    id INTEGER PRIMARY KEY, path TEXT NOT NULL, name TEXT NOT NULL, qualname TEXT NOT NULL,
    kind TEXT NOT NULL, line INTEGER NOT NULL, end_line INTEGER NOT NULL, signature TEXT,
    doc TEXT, parent TEXT, language TEXT
);
CREATE INDEX IF NOT EXISTS graph_symbols_name ON graph_symbols(name);
CREATE INDEX IF NOT EXISTS graph_symbols_path ON graph_symbols(path, line);
CREATE INDEX IF NOT EXISTS graph_symbols_parent ON graph_symbols(parent);
CREATE TABLE IF NOT EXISTS graph_refs (
    path TEXT NOT NULL, line INTEGER NOT NULL, name TEXT NOT NULL, qualifier TEXT,
    kind TEXT NOT NULL, enclosing TEXT, enclosing_line INTEGER
);
CREATE INDEX IF NOT EXISTS graph_refs_name ON graph_refs(name, kind);
CREATE INDEX IF NOT EXISTS graph_refs_path ON graph_refs(path, line);
CREATE TABLE IF NOT EXISTS graph_edges (
    path TEXT NOT NULL, line INTEGER NOT NULL, child TEXT NOT NULL, parent TEXT NOT NULL,
    kind TEXT NOT NULL, parent_qualifier TEXT
);
CREATE INDEX IF NOT EXISTS graph_edges_parent ON graph_edges(parent);
CREATE INDEX IF NOT EXISTS graph_edges_child ON graph_edges(child);
CREATE INDEX IF NOT EXISTS graph_edges_path ON graph_edges(path);
CREATE TABLE IF NOT EXISTS graph_imports (
    path TEXT NOT NULL, line INTEGER NOT NULL, module TEXT NOT NULL, name TEXT, alias TEXT
);
CREATE INDEX IF NOT EXISTS graph_imports_path ON graph_imports(path);
"""
_TABLES = ("graph_symbols", "graph_refs", "graph_edges", "graph_imports", "graph_files")
_SYMBOL_COLS = "id, path, name, qualname, kind, line, end_line, signature, doc, parent, language"


def _symbol(row) -> Symbol:
    return Symbol(id=row[0], path=row[1], name=row[2], qualname=row[3], kind=row[4], line=row[5],
                  end_line=row[6], signature=row[7] or "", doc=row[8] or "", parent=row[9],
                  language=row[10] or "")


class GraphStore:
    """Reads and writes the graph tables. Safe to share between threads of one process."""

    def __init__(self, db_path: Path):
        self.path = Path(db_path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._lock = threading.RLock()
        with self._lock:
            self._db.executescript(_SCHEMA)
            version = self._db.execute("SELECT value FROM graph_meta WHERE key='version'").fetchone()
            if version is None or version[0] != GRAPH_VERSION:  # an older layout: rebuilt lazily
                for table in _TABLES:
                    self._db.execute(f"DELETE FROM {table}")
                self._db.execute("INSERT OR REPLACE INTO graph_meta(key, value) VALUES('version', ?)",
                                 (GRAPH_VERSION,))

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- writing -----------------------------------------------------------------------------
    def replace_files(self, graphs: Iterable[tuple[FileGraph, str]]) -> None:
        """Store each (graph, file_hash), replacing everything previously known about its path."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for graph, file_hash in graphs:
                    self._delete(graph.path)
                    self._insert(graph, file_hash)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def remove_files(self, paths: Iterable[str]) -> None:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for path in paths:
                    self._delete(path)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _delete(self, path: str) -> None:
        for table in _TABLES:
            self._db.execute(f"DELETE FROM {table} WHERE path=?", (path,))

    def _insert(self, g: FileGraph, file_hash: str) -> None:
        db = self._db
        db.execute("INSERT INTO graph_files(path, file_hash, language, lines) VALUES(?,?,?,?)",
                   (g.path, file_hash, g.language, g.lines))
        db.executemany(
            "INSERT INTO graph_symbols(path, name, qualname, kind, line, end_line, signature, doc, parent,"
            " language) VALUES(?,?,?,?,?,?,?,?,?,?)",
            [(s.path, s.name, s.qualname, s.kind, s.line, s.end_line, s.signature, s.doc, s.parent,
              s.language) for s in g.symbols])
        db.executemany(
            "INSERT INTO graph_refs(path, line, name, qualifier, kind, enclosing, enclosing_line)"
            " VALUES(?,?,?,?,?,?,?)",
            [(r.path, r.line, r.name, r.qualifier, r.kind, r.enclosing, r.enclosing_line) for r in g.refs])
        db.executemany(
            "INSERT INTO graph_edges(path, line, child, parent, kind, parent_qualifier) VALUES(?,?,?,?,?,?)",
            [(e.path, e.line, e.child, e.parent, e.kind, e.parent_qualifier) for e in g.edges])
        db.executemany("INSERT INTO graph_imports(path, line, module, name, alias) VALUES(?,?,?,?,?)",
                       [(i.path, i.line, i.module, i.name, i.alias) for i in g.imports])

    # -- reading -----------------------------------------------------------------------------
    def _rows(self, sql: str, args: tuple = ()) -> list[tuple]:
        with self._lock:
            return self._db.execute(sql, args).fetchall()

    def file_hashes(self) -> dict[str, str]:
        return dict(self._rows("SELECT path, file_hash FROM graph_files"))

    def files(self) -> list[tuple[str, str | None, int]]:
        """(path, language, lines) of every graphed file, by path."""
        return self._rows("SELECT path, language, lines FROM graph_files ORDER BY path")

    def line_count(self, path: str) -> int | None:
        """Lines of a graphed file (None when it is not in the graph)."""
        rows = self._rows("SELECT lines FROM graph_files WHERE path=?", (path,))
        return rows[0][0] if rows else None

    def symbols_named(self, name: str) -> list[Symbol]:
        return [_symbol(r) for r in self._rows(f"SELECT {_SYMBOL_COLS} FROM graph_symbols WHERE name=?", (name,))]

    def symbols_in(self, path: str) -> list[Symbol]:
        return [_symbol(r) for r in self._rows(
            f"SELECT {_SYMBOL_COLS} FROM graph_symbols WHERE path=? ORDER BY line", (path,))]

    def symbols_with_parent(self, parents: Iterable[str]) -> list[Symbol]:
        parents = list(parents)
        if not parents:
            return []
        marks = ",".join("?" * len(parents))
        return [_symbol(r) for r in self._rows(
            f"SELECT {_SYMBOL_COLS} FROM graph_symbols WHERE parent IN ({marks})", tuple(parents))]

    def symbols_of_kind(self, kinds: Iterable[str], language: str | None = None) -> list[Symbol]:
        kinds = list(kinds)
        marks = ",".join("?" * len(kinds))
        sql = f"SELECT {_SYMBOL_COLS} FROM graph_symbols WHERE kind IN ({marks})"
        args: tuple = tuple(kinds)
        if language:
            sql += " AND language=?"
            args += (language,)
        return [_symbol(r) for r in self._rows(sql, args)]

    def refs_named(self, name: str, kinds: Iterable[str] | None = None) -> list[Ref]:
        sql = "SELECT path, line, name, qualifier, kind, enclosing, enclosing_line FROM graph_refs WHERE name=?"
        args: tuple = (name,)
        if kinds:
            kinds = list(kinds)
            sql += f" AND kind IN ({','.join('?' * len(kinds))})"
            args += tuple(kinds)
        return [Ref(*r) for r in self._rows(sql + " ORDER BY path, line", args)]

    def refs_in(self, path: str, start: int, end: int, kinds: Iterable[str] = ("call",)) -> list[Ref]:
        kinds = list(kinds)
        return [Ref(*r) for r in self._rows(
            "SELECT path, line, name, qualifier, kind, enclosing, enclosing_line FROM graph_refs"
            f" WHERE path=? AND line BETWEEN ? AND ? AND kind IN ({','.join('?' * len(kinds))})"
            " ORDER BY line", (path, start, end, *kinds))]

    def imports_of(self, path: str) -> list[Import]:
        return [Import(*r) for r in self._rows(
            "SELECT path, line, module, name, alias FROM graph_imports WHERE path=?", (path,))]

    def edges_to(self, parent: str) -> list[Edge]:
        return [Edge(*r) for r in self._rows(
            "SELECT path, line, child, parent, kind, parent_qualifier FROM graph_edges WHERE parent=?", (parent,))]

    def edges_from(self, child: str) -> list[Edge]:
        return [Edge(*r) for r in self._rows(
            "SELECT path, line, child, parent, kind, parent_qualifier FROM graph_edges WHERE child=?", (child,))]

    def edges_of_kind(self, kind: str) -> list[Edge]:
        return [Edge(*r) for r in self._rows(
            "SELECT path, line, child, parent, kind, parent_qualifier FROM graph_edges WHERE kind=?", (kind,))]

    def counts(self) -> dict[str, int]:
        out = {}
        for table in _TABLES:
            out[table.removeprefix("graph_")] = self._rows(f"SELECT COUNT(*) FROM {table}")[0][0]
        return out
