"""The text a library's chunks were cut from, kept in the library's own manifest.

A project's snippets are read from disk, but a library's cannot always be: an HTML page is chunked
as the text extracted from it (its line numbers are those of the text, not of the markup), and an
*incremental* library keeps documents searchable after they are deleted from the folder. So a
library index keeps each indexed document's readable text in ``library_texts`` (one row per file
version), and snippets and ``open_file("library:NAME/PATH")`` read it from there.

Only library workspaces create the table (with the first text a manifest keeps). A trigger drops a file's texts when its manifest row is
deleted (a sync library's deleted file, ``--rebuild``), so nothing outlives the index.
"""
from __future__ import annotations

import sqlite3
import time
import weakref
from pathlib import Path
from typing import TYPE_CHECKING

from ..storage.damage import readonly_uri

if TYPE_CHECKING:
    from ..workspace import Workspace

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS library_texts (path TEXT NOT NULL, file_hash TEXT NOT NULL, text TEXT NOT NULL,"
    " indexed_at REAL NOT NULL, PRIMARY KEY(path, file_hash))",
    "CREATE TRIGGER IF NOT EXISTS library_texts_gone AFTER DELETE ON files"
    " BEGIN DELETE FROM library_texts WHERE path = OLD.path; END",
)


# The manifests (objects) known to hold the table. A rebuild (``--rebuild``, a damaged index's
# repair) makes a new manifest without it, so the table is made with the first text each manifest
# keeps, not once per workspace; and opening a library never touches a manifest that may be damaged.
_HAS_TABLE: "weakref.WeakSet" = weakref.WeakSet()


def retain(ws: "Workspace", path: str, file_hash: str, text: str) -> None:
    """Keep ``text`` as the readable text of this version of ``path`` (older versions go)."""
    man = ws.manifest
    with man.transaction() as db:
        if man not in _HAS_TABLE:
            for stmt in _SCHEMA:
                db.execute(stmt)
            _HAS_TABLE.add(man)
        db.execute("DELETE FROM library_texts WHERE path=? AND file_hash!=?", (path, file_hash))
        db.execute("INSERT OR REPLACE INTO library_texts(path, file_hash, text, indexed_at) VALUES(?,?,?,?)",
                   (path, file_hash, text, time.time()))


class TextReader:
    """Read-only access to one library index's texts (its own SQLite connection: safe beside the
    process that owns and writes the index). Each text is read once per reader."""

    def __init__(self, manifest_path: Path):
        self.path = Path(manifest_path)
        self._db: sqlite3.Connection | None = None
        self._cache: dict[tuple[str, str | None], tuple[str, str, float] | None] = {}

    def _conn(self) -> sqlite3.Connection | None:
        if self._db is None:
            if not self.path.exists():
                return None
            self._db = sqlite3.connect(readonly_uri(self.path), uri=True, check_same_thread=False, timeout=10)
        return self._db

    def get(self, path: str, file_hash: str | None = None) -> tuple[str, str, float] | None:
        """``(text, file_hash, indexed_at)`` of ``path`` (that version if given, else the newest)."""
        key = (path, file_hash)
        if key in self._cache:
            return self._cache[key]
        db = self._conn()
        row = None
        if db is not None:
            try:
                if file_hash:
                    row = db.execute("SELECT text, file_hash, indexed_at FROM library_texts WHERE path=? AND file_hash=?",
                                     (path, file_hash)).fetchone()
                if row is None:
                    row = db.execute("SELECT text, file_hash, indexed_at FROM library_texts WHERE path=?"
                                     " ORDER BY indexed_at DESC LIMIT 1", (path,)).fetchone()
            except sqlite3.OperationalError:  # not indexed yet: no table
                row = None
        self._cache[key] = row
        return row

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
