"""The word postings, one row per word: ``graph_postings(term, files)``, ``files`` the sorted ids of
the files holding the word, fixed-width little-endian integers behind a width byte (2 while every
id is below 65,536, else 4).

One (term, file) row per distinct word of a file took 31.5 MB of a 2.9M-line monorepo's manifest
(2.6M rows, a third of the pages per-row overhead); packed per word, the lists are what they hold.
Lists are read and written with numpy, never a Python loop per posting: a list decodes by a copy,
and a transaction's changes are merged in one pass over the words it touches (``apply``), as
(term << 32 | file) keys sorted together.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

import numpy as np

SCHEMA = "CREATE TABLE IF NOT EXISTS graph_postings (term INTEGER PRIMARY KEY, files BLOB NOT NULL)"
_READ_IDS = 500  # host parameters per IN (...)
_NARROW, _WIDE = 2, 4  # the width byte
_EMPTY = np.empty(0, np.uint64)


def pack(files: Sequence[int] | np.ndarray) -> bytes:
    """One word's list: its sorted, distinct file ids."""
    files = np.asarray(files, np.uint32)
    if files.size and files.max() > 0xFFFF:
        return bytes([_WIDE]) + files.astype("<u4").tobytes()
    return bytes([_NARROW]) + files.astype("<u2").tobytes()


def unpack(blob: bytes) -> np.ndarray:
    """The file ids of one list (uint32)."""
    return np.frombuffer(blob, "<u2" if blob[0] == _NARROW else "<u4", offset=1).astype(np.uint32)


def _joined(blobs: list[bytes], width: int) -> tuple[np.ndarray, np.ndarray]:
    """The ids of lists of one width, joined (uint32), and how many each list holds: the lists
    are joined whole and their width bytes dropped at once (a slice of each costs 5× more)."""
    lengths = np.fromiter(map(len, blobs), np.int64, len(blobs))
    raw = np.delete(np.frombuffer(b"".join(blobs), np.uint8), np.cumsum(lengths) - lengths)
    return raw.view("<u2" if width == _NARROW else "<u4").astype(np.uint32), (lengths - 1) // width


def ids(blobs: list[bytes]) -> np.ndarray:
    """The file ids of every list in ``blobs``, joined (uint32, in no particular order)."""
    narrow = [b for b in blobs if b[0] == _NARROW]
    found = _joined(narrow, _NARROW)[0]
    if len(narrow) < len(blobs):
        found = np.concatenate((found, _joined([b for b in blobs if b[0] == _WIDE], _WIDE)[0]))
    return found


def keys(rows: Iterable[tuple[int, bytes]]) -> np.ndarray:
    """(term << 32 | file) of every posting in (term, list) rows, in no particular order: the
    lists of each width are joined and read at once."""
    rows = list(rows)
    parts = []
    for width in (_NARROW, _WIDE):
        chosen = [r for r in rows if r[1][0] == width]
        if chosen:  # (not zip(*chosen): 15× slower for 100k rows)
            files, counts = _joined([r[1] for r in chosen], width)
            terms = np.fromiter((r[0] for r in chosen), np.uint64, len(chosen))
            parts.append(np.repeat(terms, counts) << np.uint64(32) | files.astype(np.uint64))
    return np.concatenate(parts) if parts else _EMPTY


def encode(found: np.ndarray) -> tuple[list[int], list[bytes]]:
    """The (terms, lists) of sorted, distinct keys: one list a term, each sliced from one buffer."""
    if not found.size:
        return [], []
    terms = found >> np.uint64(32)
    files = (found & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    starts = np.flatnonzero(np.concatenate(([True], terms[1:] != terms[:-1])))
    ends = np.append(starts[1:], found.size).tolist()
    wide = (np.maximum.reduceat(files, starts) > 0xFFFF).tolist()
    narrow_bytes = files.astype("<u2").tobytes()  # an id past 65,535 wraps here: its term reads wide_bytes
    wide_bytes = files.astype("<u4").tobytes() if any(wide) else b""
    narrow_head, wide_head = bytes([_NARROW]), bytes([_WIDE])
    blobs = [wide_head + wide_bytes[4 * s:4 * e] if w else narrow_head + narrow_bytes[2 * s:2 * e]
             for s, e, w in zip(starts.tolist(), ends, wide)]
    return terms[starts].tolist(), blobs


def read(db, terms: list[int]) -> list[tuple[int, bytes]]:
    """The (term, list) rows of ``terms`` (those that have one)."""
    out: list[tuple[int, bytes]] = []
    for start in range(0, len(terms), _READ_IDS):
        part = terms[start:start + _READ_IDS]
        out += db.execute(f"SELECT term, files FROM graph_postings WHERE term IN ({','.join('?' * len(part))})",
                          part).fetchall()
    return out


def file_keys(files: list[tuple[int, Sequence[int]]]) -> np.ndarray:
    """The sorted keys of (file id, its term ids) pairs."""
    if not files:
        return _EMPTY
    terms = np.concatenate([np.asarray(t, np.uint64) for _, t in files])
    ids = np.repeat(np.array([f for f, _ in files], np.uint64), [len(t) for _, t in files])
    return np.sort(terms << np.uint64(32) | ids)


def apply(db, added: list[tuple[int, Sequence[int]]], removed: list[tuple[int, Sequence[int]]],
          new_after: int | None = None) -> None:
    """Post ``added`` and take back ``removed`` ((file id, its term ids) pairs; a file removed and
    added again under its id keeps its postings) in the lists, inside the caller's transaction.
    Terms with an id above ``new_after`` were made by this transaction: they have no list to read.
    Sorted arrays are merged by binary search (``np.unique`` hashes: 30× slower here)."""
    add, rem = _distinct(file_keys(added)), _distinct(file_keys(removed))
    touched = _distinct(np.sort(np.concatenate((add >> np.uint64(32), rem >> np.uint64(32)))))
    if not touched.size:
        return
    old = keys(sorted(read(db, (touched if new_after is None else touched[touched <= new_after]).tolist())))
    if old.size > 1 and not (old[1:] > old[:-1]).all():  # lists of both widths: joined width by width
        old = _distinct(np.sort(old))
    if rem.size:
        old = np.delete(old, np.searchsorted(old, rem[_within(old, rem)]))
    if add.size:
        new = add[~_within(old, add)]
        old = np.insert(old, np.searchsorted(old, new), new)
    terms, blobs = encode(old)
    gone = touched[~_within(np.array(terms, np.uint64), touched)].tolist()
    db.executemany("DELETE FROM graph_postings WHERE term=?", [(t,) for t in gone])
    db.executemany("INSERT OR REPLACE INTO graph_postings(term, files) VALUES(?,?)", zip(terms, blobs))


def _distinct(found: np.ndarray) -> np.ndarray:
    """A sorted array without its repeats."""
    return found[np.concatenate(([True], found[1:] != found[:-1]))] if found.size else found


def _within(found: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Which of ``values`` the sorted array ``found`` holds."""
    if not found.size:
        return np.zeros(values.size, bool)
    at = np.minimum(np.searchsorted(found, values), found.size - 1)
    return found[at] == values


def files_holding(db, groups: list[list[int]]) -> np.ndarray:
    """The sorted ids of the files holding a word of every group (union within a group,
    intersection across groups)."""
    lists = dict(read(db, sorted({t for g in groups for t in g})))
    hit: np.ndarray | None = None
    for group in sorted(groups, key=len):
        files = _distinct(np.sort(ids([lists[t] for t in group if t in lists])))
        hit = files if hit is None else np.intersect1d(hit, files, assume_unique=True)
        if not hit.size:
            break
    return _EMPTY if hit is None else hit


def posted_files(db, groups: list[list[int]]) -> list[tuple]:
    """``GraphStore.posted_files``: (path, file_hash, language, chunk_kind) by path of the posted
    files, at their indexed version, that hold a word of every group (no group: every one)."""
    sql = " JOIN files f ON f.path = g.path AND f.file_hash = g.file_hash" \
          " WHERE f.last_error IS NULL AND g.terms IS NOT NULL ORDER BY g.path"
    if not groups:
        return db.execute("SELECT g.path, f.file_hash, f.language, f.chunk_kind FROM graph_files g" + sql).fetchall()
    hit = files_holding(db, groups)
    if not hit.size:
        return []
    return db.execute(  # the ids as one JSON array, not a host parameter each
        "WITH hit(file) AS (SELECT value FROM json_each(?)) SELECT g.path, f.file_hash, f.language,"
        " f.chunk_kind FROM hit JOIN graph_files g ON g.id = hit.file" + sql, (json.dumps(hit.tolist()),)).fetchall()


def readable(con) -> None:
    """Give a connection ``posting_files(files)``: a list's ids as a JSON array, for ``json_each``
    (a query of the lists as rows: tests, inspection)."""
    con.create_function("posting_files", 1, lambda blob: json.dumps(unpack(blob).tolist()), deterministic=True)
