"""A manifest as schema version 5 kept it (paths and 36-character point ids in ``chunks``, hashes as
hex text, text ids in the queue), made from a current one, to test the migration that follows."""
from __future__ import annotations

from probe_core.storage.manifest_codec import digest_text, pid_text

_V5 = """
CREATE TABLE chunks (
    point_id TEXT PRIMARY KEY, path TEXT NOT NULL, chunk_idx INTEGER NOT NULL, start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL, chunk_hash TEXT NOT NULL, symbol TEXT, symbol_kind TEXT, parent_symbol TEXT,
    is_fragment INTEGER NOT NULL DEFAULT 0, has_dense INTEGER NOT NULL DEFAULT 0,
    file_hash TEXT NOT NULL DEFAULT '', live INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX chunks_path ON chunks(path, start_line);
CREATE INDEX chunks_dense ON chunks(has_dense);
CREATE TABLE pending_dense (point_id TEXT PRIMARY KEY, text TEXT NOT NULL, fill_order INTEGER NOT NULL DEFAULT -1);
CREATE INDEX pending_order ON pending_dense(fill_order);
"""


def to_version_5(db) -> None:
    """Rewrite the manifest behind ``db`` (a connection, outside a transaction) as version 5,
    row ids kept."""
    chunks = [(r[0], pid_text(r[1]), r[2], *r[3:6], digest_text(r[6]), *r[7:12], digest_text(r[12]), r[13])
              for r in db.execute(
                  "SELECT c.rowid, c.point_id, p.path, c.chunk_idx, c.start_line, c.end_line, c.chunk_hash,"
                  " c.symbol, c.symbol_kind, c.parent_symbol, c.is_fragment, c.has_dense, c.file_hash, c.live"
                  " FROM chunks c JOIN paths p ON p.id = c.file")]
    queue = [(r[0], pid_text(r[1]), r[2], r[3])
             for r in db.execute("SELECT rowid, point_id, text, fill_order FROM pending_dense")]
    db.execute("BEGIN IMMEDIATE")
    for table in ("chunks", "pending_dense", "paths"):
        db.execute(f"DROP TABLE {table}")
    for statement in _V5.split(";"):
        db.execute(statement)
    db.executemany("INSERT INTO chunks(rowid, point_id, path, chunk_idx, start_line, end_line, chunk_hash, symbol,"
                   " symbol_kind, parent_symbol, is_fragment, has_dense, file_hash, live)"
                   " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)", chunks)
    db.executemany("INSERT INTO pending_dense(rowid, point_id, text, fill_order) VALUES(?,?,?,?)", queue)
    db.execute("UPDATE meta SET value='5' WHERE key='schema_version'")
    db.execute("COMMIT")
