"""Damage to the derived files under ``.probe/``: detect it, say so, and clear the way to a rebuild.

Everything under ``.probe/`` except ``config.json`` (the workspace's settings) and ``memory.sqlite``
(the user's project rules) is derived from the tree, so a damaged manifest or store is never fixed
in place: it is deleted and rebuilt. What this module does:

* **Detect.** ``PRAGMA quick_check`` on the manifest when it is opened after an unclean stop (no
  clean-close mark, or the file changed since the mark was written: a crash, a disk error, a
  stray write), and every SQLite error that names corruption ("malformed", "not a database") is
  turned into ``IndexDamaged`` wherever the manifest is read. Store reads that fail with anything
  but a lock are reported the same way by the stores.
* **Report.** ``IndexDamaged``'s message names the file and says to run ``probe index --rebuild``;
  ``index_status`` and ``probe doctor`` carry it (``index_damaged``).
* **Repair.** ``wipe_index`` deletes the manifest (with its WAL) and the embedded store, whatever
  state they are in, so ``--rebuild`` works from any damage; an owner repairs by itself.
"""
from __future__ import annotations

import json
import logging
import os
import re
import shutil
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from ..errors import IndexDamaged
from .edge_optimize import COPY_SUFFIX, OLD_SUFFIX

log = logging.getLogger("probe.storage")

CORRUPTION_WORDS = ("malformed", "not a database", "file is encrypted", "corrupt")
REBUILD_HINT = "run `probe index --rebuild` to rebuild it from the files"


def is_corruption(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite saying a database file is damaged (not busy, not locked)."""
    return isinstance(exc, sqlite3.DatabaseError) and any(w in str(exc).lower() for w in CORRUPTION_WORDS)


def damaged(path: Path, detail: str) -> IndexDamaged:
    """The error for a damaged manifest at ``path``, recorded beside it for status."""
    err = IndexDamaged(f"the index file {path} is damaged ({one_line(detail)[:300]}); {REBUILD_HINT}")
    record_damage(path.parent, str(err))
    return err


DAMAGE_FILE = "damage.json"  # the last damage seen, kept until a rebuild: status reads it in any process
# What Qdrant Edge (0.9.0) says when its files are garbled, cut or missing, seen on real damaged
# shards (docs/reliability.md, "Review findings"). Matched only in the Edge's own bare
# ``Exception``s, with the shard's path taken out: a folder called ``video-decoder`` is no damage.
STORE_DAMAGE_WORDS = ("failed to decode value", "failed to decompress", "failed to deserialize",
                      "eof while parsing", "failed to read segment state", "gridstore io error",
                      "inconsistent number of gridstore pages", "corrupted", "illegal segment header",
                      "checksum mismatch", "(os error 2)")
_SERDE_AT = re.compile(r" at line \d+ column \d+")  # a JSON file of the shard that does not parse


def record_damage(probe_dir: Path, message: str) -> None:
    """Remember ``message`` (an ``IndexDamaged`` text) so that every later status reports it."""
    try:
        (Path(probe_dir) / DAMAGE_FILE).write_text(json.dumps({"message": message}), "utf-8")
    except OSError:
        pass


def recorded_damage(probe_dir: Path) -> str | None:
    try:
        message = json.loads((Path(probe_dir) / DAMAGE_FILE).read_text("utf-8")).get("message")
    except (OSError, ValueError, AttributeError):
        return None
    return str(message) if message else None


def edge_words(exc: BaseException, shard: Path) -> str:
    """A Qdrant Edge error's message with the shard's path left out (lowercase, one line): what
    the Edge said, not what the user named their folders."""
    text = one_line(str(exc))
    for path in sorted({str(shard), os.path.realpath(shard)}, key=len, reverse=True):
        text = text.replace(path, "<shard>")
    return text.lower()


def store_damaged(probe_dir: Path, shard: Path, exc: BaseException | str) -> IndexDamaged | None:
    """The ``IndexDamaged`` a Qdrant Edge failure means (recorded), or None for any other failure.
    The Edge raises a bare ``Exception``; Python's own errors (``FileNotFoundError``, ``EOFError``,
    ``UnicodeDecodeError`` ...) never mean the store's files are damaged. A ``str`` is a finding of
    Probe's own (a point without its payload)."""
    text = one_line(str(exc))
    if not isinstance(exc, str):
        words = edge_words(exc, shard)
        if type(exc) is not Exception or not (any(w in words for w in STORE_DAMAGE_WORDS) or _SERDE_AT.search(words)):
            return None
    err = IndexDamaged(f"the vector store at {shard} is damaged ({text[:300]}); {REBUILD_HINT}")
    record_damage(probe_dir, str(err))
    return err


SEGMENT_PARTS = ("segment.json", "payload_storage", "vector_storage-dense", "vector_storage-bm25")


def shard_problem(shard: Path) -> str | None:
    """A Qdrant Edge shard missing a piece every segment has (Qdrant would open it and quietly
    answer from what is left: no BM25 hits at all without ``vector_storage-bm25``)."""
    segments = Path(shard) / "segments"
    try:
        dirs = [d for d in segments.iterdir() if d.is_dir()]
    except OSError:
        return None  # no segments at all: the store check counts the missing points
    for seg in dirs:
        missing = [part for part in SEGMENT_PARTS if not (seg / part).exists()]
        if missing:
            return f"segment {seg.name} lacks {', '.join(missing)}"
    return None


def readonly_uri(path: Path | str) -> str:
    """An SQLite URI opening ``path`` read-only. Quoted: a ``#``, ``?`` or ``%`` in a folder name
    would otherwise cut or change the path (``C#/repo`` opened ``C``, and the open failed)."""
    return f"file:{quote(str(path))}?mode=ro"


def quick_check(path: Path) -> str | None:
    """``PRAGMA quick_check`` of the SQLite file at ``path``: None when sound, else what is wrong."""
    try:
        db = sqlite3.connect(readonly_uri(path), uri=True, timeout=30)
        try:
            rows = [r[0] for r in db.execute("PRAGMA quick_check(5)")]
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        if isinstance(exc, sqlite3.OperationalError) and not is_corruption(exc):
            return None  # busy/locked is not damage; the normal open reports what it is
        return str(exc)
    if rows == ["ok"]:
        return None
    lines = [ln for r in rows for ln in str(r).splitlines() if ln.strip() and not ln.startswith("***")]
    return one_line("; ".join(lines[:3]) or "; ".join(rows))[:300]


def one_line(text: str) -> str:
    return " ".join(str(text).split())


def _mark_path(path: Path) -> Path:
    return path.with_name(path.name + ".clean")


def _stat_key(path: Path) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def opened_cleanly(path: Path) -> bool:
    """True when ``path`` was closed cleanly and is unchanged since; consumes the mark (the open
    that follows owns the file until its own clean close writes a new one)."""
    mark = _mark_path(path)
    try:
        recorded = json.loads(mark.read_text("utf-8"))
    except (OSError, ValueError):
        recorded = None
    try:
        mark.unlink()
    except OSError:
        pass
    return recorded is not None and recorded == _stat_key(path)


def mark_clean(path: Path) -> None:
    """After the last connection closed (the WAL folded in): record the file as it is now."""
    key = _stat_key(path)
    if key is None or Path(str(path) + "-wal").exists():
        return  # someone else still has it open: the next open checks
    try:
        _mark_path(path).write_text(json.dumps(key), "utf-8")
    except OSError:
        pass


def check_on_open(path: Path) -> None:
    """Raise ``IndexDamaged`` when ``path`` was not closed cleanly and fails ``quick_check``."""
    if not path.exists() or opened_cleanly(path):
        return
    if (problem := quick_check(path)) is not None:
        log.warning("%s failed its integrity check: %s", path, problem)
        raise damaged(path, problem)


class CheckedConnection:
    """A ``sqlite3.Connection`` whose corruption errors surface as ``IndexDamaged`` (one clear
    line with the fix) instead of "internal error: database disk image is malformed"."""

    def __init__(self, db: sqlite3.Connection, path: Path):
        self._db = db
        self._path = path

    def _run(self, name: str, *args):
        try:  # not ``translated()``: a context manager per statement was ~10 % of an index's writes
            out = getattr(self._db, name)(*args)
        except sqlite3.DatabaseError as exc:
            if is_corruption(exc):
                raise damaged(self._path, str(exc)) from exc
            raise
        return _CheckedCursor(out, self) if isinstance(out, sqlite3.Cursor) else out

    @contextmanager
    def translated(self):
        try:
            yield
        except sqlite3.DatabaseError as exc:
            if is_corruption(exc):
                raise damaged(self._path, str(exc)) from exc
            raise

    def execute(self, *args):
        return self._run("execute", *args)

    def executemany(self, *args):
        return self._run("executemany", *args)

    def executescript(self, *args):
        return self._run("executescript", *args)

    def close(self) -> None:
        self._db.close()

    def __getattr__(self, name: str):  # anything else (in_transaction, create_function ...) as is
        return getattr(self._db, name)


class _CheckedCursor:
    """A cursor whose later steps (``fetchall``, iteration) translate corruption errors too."""

    def __init__(self, cur: sqlite3.Cursor, conn: CheckedConnection):
        self._cur, self._conn = cur, conn

    def fetchone(self):
        with self._conn.translated():
            return self._cur.fetchone()

    def fetchall(self):
        with self._conn.translated():
            return self._cur.fetchall()

    def __iter__(self):
        return iter(self.fetchall())

    def __getattr__(self, name: str):  # rowcount, lastrowid, description ...
        return getattr(self._cur, name)


def as_probe_error(exc: BaseException) -> BaseException:
    """``exc``, or the ``IndexDamaged`` it means when it is an SQLite corruption error raised by a
    reader outside the manifest's own connection (graph, text cache): for the faces' last resort."""
    if is_corruption(exc):
        return IndexDamaged(f"the index under .probe/ is damaged ({exc}); {REBUILD_HINT}")
    return exc


def manifest_files(probe_dir: Path) -> list[Path]:
    base = Path(probe_dir) / "manifest.sqlite"
    return [base, Path(f"{base}-wal"), Path(f"{base}-shm"), _mark_path(base), Path(probe_dir) / DAMAGE_FILE]


def wipe_index(probe_dir: Path, collection: str | None) -> list[str]:
    """Delete the manifest and (``collection`` given: the embedded store's) shard, in any state.
    Returns what was removed. The caller has closed them."""
    removed: list[str] = []
    for f in manifest_files(probe_dir):
        try:
            f.unlink()
            removed.append(f.name)
        except FileNotFoundError:
            pass
    store = Path(probe_dir) / "store"
    if store.is_symlink() or (store.exists() and not store.is_dir()):  # a file where the store dir belongs
        store.unlink()
        removed.append("store")
    if collection is not None:
        shard = store / collection
        for aside in (COPY_SUFFIX, OLD_SUFFIX):  # an optimization's copy or a swap's old files
            other = store / f"{collection}{aside}"  # (``edge_optimize``): opening would take them back
            if other.is_dir() and not other.is_symlink():
                shutil.rmtree(other, ignore_errors=True)
                removed.append(f"store/{collection}{aside}")
        if shard.is_dir() and not shard.is_symlink():
            shutil.rmtree(shard, ignore_errors=True)
            removed.append(f"store/{collection}")
        elif shard.exists() or shard.is_symlink():  # a stray file (or link) where the shard belongs
            shard.unlink()
            removed.append(f"store/{collection}")
    return removed
