"""Graph layout 8 → 9, in place: a symbol row names its file by id instead of by path, takes its
language from the file, and holds no qualified name where it is ``parent.name`` (or ``name`` at the
top): ``QUALNAME`` makes it again (``store.py``).

The path in every symbol row and in the ``(path, line)`` index took ~20 MB of a 2.9M-line
monorepo's manifest, the qualified names 3.6 MB. Layout 8 holds everything layout 9 does, so the rows are copied in one
transaction (a few seconds for the monorepo's symbols) instead of the graph being rebuilt from the
files. Symbol ids do not change. A symbol row whose path has no file row (none should exist: a
file's rows are written and deleted together) is dropped with the copy.
"""
from __future__ import annotations

from .migrate import convert_in_place

FROM_VERSION = "8"
_DERIVED = "CASE WHEN s.parent IS NULL THEN s.name ELSE s.parent || '.' || s.name END"
QUALNAME = f"COALESCE(s.qualname, {_DERIVED})"
_STORED = f"CASE WHEN s.qualname = ({_DERIVED}) THEN NULL ELSE s.qualname END"


def symbol_row(row: tuple) -> tuple:
    """A symbol's row as layout 8 held it (``rows.file_rows``: path first, language last) → its
    columns from ``name`` to ``parent``, the qualified name None where ``QUALNAME`` makes it again."""
    name, qualname, parent = row[1], row[2], row[8]
    derived = name if parent is None else f"{parent}.{name}"
    return (name, None if qualname == derived else qualname) + row[3:9]


def symbol_statements(schema: str, *, keep: bool) -> list[str]:
    """The statements of ``schema`` that make (``keep``) or do not make the symbols' table and indexes."""
    return [s for s in schema.split(";") if s.strip() and ("graph_symbols" in s) == keep]


def to_file_ids(db, schema: str, version: str) -> bool:
    """Convert a version-8 graph behind ``db`` (autocommit) to ``version``; False when another
    connection did it first."""
    def steps(db) -> None:
        db.execute("ALTER TABLE graph_symbols RENAME TO graph_symbols_v8")
        for index in ("graph_symbols_name", "graph_symbols_path", "graph_symbols_parent"):
            db.execute(f"DROP INDEX IF EXISTS {index}")
        for statement in symbol_statements(schema, keep=True):
            db.execute(statement)
        db.execute(
            "INSERT INTO graph_symbols(id, file, name, qualname, kind, line, end_line, signature, doc, parent)"
            f" SELECT s.id, f.id, s.name, {_STORED}, s.kind, s.line, s.end_line, s.signature, s.doc, s.parent"
            " FROM graph_symbols_v8 s JOIN graph_files f ON f.path = s.path ORDER BY s.id")
        db.execute("DROP TABLE graph_symbols_v8")
    return convert_in_place(db, FROM_VERSION, version, steps, "symbols by file id")
