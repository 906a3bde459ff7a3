"""Graph layout 7 → 8, in place: uses and imports packed per file, word ids per file compressed
(``store.py``, ``packing.py``).

Rebuilding the graph instead would read and parse every file again (minutes on a monorepo) and,
meanwhile, leave search without its word postings. Layout 7 holds everything layout 8 does, so the
rows are converted in one transaction (~10 s for a 2.9M-line monorepo's 2.9M uses); the word
postings, names, symbols and edges are kept as they are. Ids do not change, so a use keeps its names.
The file keeps the freed pages for its next rows unless it was made with incremental auto-vacuum
(a manifest made since schema 4), which gives them back.
"""
from __future__ import annotations

import logging
from array import array
from collections import defaultdict
from collections.abc import Callable

from .model import Import
from .packing import pack_imports, pack_rows, pack_terms

log = logging.getLogger("probe.intel")

FROM_VERSION = "7"


def convert_in_place(db, from_version: str, version: str, steps: Callable[[object], None], what: str) -> bool:
    """Run ``steps`` on the graph behind ``db`` (autocommit) in one transaction that also sets its
    layout from ``from_version`` to ``version``; False when it is not at ``from_version`` (another
    connection converted it first). A failure rolls everything back: the graph stays as it was."""
    db.execute("BEGIN IMMEDIATE")
    try:
        found = db.execute("SELECT value FROM graph_meta WHERE key='version'").fetchone()
        if found is None or found[0] != from_version:
            db.execute("ROLLBACK")
            return False
        steps(db)
        db.execute("UPDATE graph_meta SET value=? WHERE key='version'", (version,))
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
    if db.execute("PRAGMA auto_vacuum").fetchone()[0] == 2:  # incremental: give the freed pages back
        db.executescript("PRAGMA incremental_vacuum;")  # stepped to its end (execute frees one page a step)
    log.info("symbol graph: %s (layout %s → %s)", what, from_version, version)
    return True


def to_packed(db, schema: str, version: str) -> bool:
    """Convert a version-7 graph behind ``db`` (autocommit) to ``version``; False when another
    connection did it first."""
    def steps(db) -> None:
        db.execute("ALTER TABLE graph_refs RENAME TO graph_refs_v7")
        for statement in schema.split(";"):
            if statement.strip():
                db.execute(statement)
        _pack(db)
        db.executemany("UPDATE graph_files SET terms=? WHERE id=?", [
            (pack_terms(list(array("I", terms))), file_id)
            for file_id, terms in db.execute("SELECT id, terms FROM graph_files WHERE terms IS NOT NULL").fetchall()])
        for table in ("graph_refs_v7", "graph_imports"):
            db.execute(f"DROP TABLE {table}")
    return convert_in_place(db, FROM_VERSION, version, steps, "uses packed per file")


def _pack(db) -> None:
    """Each file's uses (in their rows' order) and imports into ``graph_uses``; the posting list."""
    imports: dict[int, list[Import]] = defaultdict(list)
    for file_id, path, line, module, name, alias in db.execute(
            "SELECT f.id, i.path, i.line, i.module, i.name, i.alias FROM graph_imports i"
            " JOIN graph_files f ON f.path = i.path ORDER BY i.rowid").fetchall():
        imports[file_id].append(Import(path, line, module, name, alias))
    files = sorted({r[0] for r in db.execute("SELECT DISTINCT file FROM graph_refs_v7")} | set(imports))
    posted: list[tuple[int, int, int]] = []
    for file_id in files:
        rows = db.execute("SELECT name, line, kind, COALESCE(qualifier, 0), COALESCE(enclosing, 0),"
                          " COALESCE(enclosing_line, 0) FROM graph_refs_v7 WHERE file=? ORDER BY rowid",
                          (file_id,)).fetchall()
        uses, entries = pack_rows(rows)
        db.execute("INSERT INTO graph_uses(file, uses, imports) VALUES(?,?,?)",
                   (file_id, uses, pack_imports(imports.get(file_id, []))))
        posted.extend((name, file_id, bits) for name, bits in entries.items())
    posted.sort()
    db.executemany("INSERT INTO graph_refs(name, file, kind) VALUES(?,?,?)", posted)
