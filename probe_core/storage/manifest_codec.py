"""How the manifest stores point ids, content hashes and paths compactly (schema version 6).

A point id is a UUID (``records.point_id``): 36 characters as text, 16 bytes as what it encodes. A
content hash (``records.short_hash``) is 16 hex characters, 8 bytes. The manifest stores the bytes
and gives the text back on every read, so nothing outside ``storage/manifest.py`` and
``dense_queue.py`` sees the difference; the store's point ids are the text, unchanged. A value that
is not in the canonical form (an id a test makes up, a hash of another length, ``''``) is stored as
the text it is: encoding and decoding give back exactly what was written, whatever it was.
"""
from __future__ import annotations

# a path's file id (``paths.id``), for ``WHERE file=...``: one indexed lookup; a path not there
# gives NULL, so nothing matches
FILE = "(SELECT id FROM paths WHERE path=?)"


def pid(point_id: str) -> bytes | str:
    """The stored form of a point id: its 16 bytes when it is a lower-case UUID, else itself."""
    if len(point_id) == 36 and point_id[8] == point_id[13] == point_id[18] == point_id[23] == "-":
        digits = point_id.replace("-", "")
        try:
            raw = bytes.fromhex(digits)
        except ValueError:
            return point_id
        if len(raw) == 16 and raw.hex() == digits:
            return raw
    return point_id


def pid_text(stored: bytes | str) -> str:
    """The point id a stored value holds (``pid``'s inverse)."""
    if stored.__class__ is bytes:
        h = stored.hex()
        return "-".join((h[:8], h[8:12], h[12:16], h[16:20], h[20:]))
    return stored


def pids(point_ids) -> list:
    return [pid(i) for i in point_ids]


def stored_ids(point_ids) -> dict:
    """stored form → point id, for a query by ids that gives back some of them (no decoding)."""
    return {pid(i): i for i in point_ids}


def digest(text: str) -> bytes | str:
    """The stored form of a content hash: its 8 bytes when it is 16 lower-case hex digits, else itself."""
    if len(text) == 16:
        try:
            raw = bytes.fromhex(text)
        except ValueError:
            return text
        if raw.hex() == text:
            return raw
    return text


def digest_text(stored: bytes | str) -> str:
    """The content hash a stored value holds (``digest``'s inverse)."""
    return stored.hex() if isinstance(stored, bytes) else stored


def hex_sql(column: str) -> str:
    """SQL giving a stored hash as its text, to compare with the tables that keep hashes as text
    (``files``, ``branch_files``)."""
    return f"(CASE typeof({column}) WHEN 'blob' THEN lower(hex({column})) ELSE {column} END)"


def path_ids(db, paths: set[str]) -> dict[str, int]:
    """path → ``paths.id``, adding the paths not there yet."""
    out = {}
    for path in sorted(paths):
        db.execute("INSERT OR IGNORE INTO paths(path) VALUES(?)", (path,))
        out[path] = db.execute("SELECT id FROM paths WHERE path=?", (path,)).fetchone()[0]
    return out


def forget_path(db, path: str) -> None:
    """Drop the ``paths`` row of a path no chunk names any more."""
    db.execute("DELETE FROM paths WHERE path=? AND NOT EXISTS (SELECT 1 FROM chunks WHERE file=paths.id)", (path,))
