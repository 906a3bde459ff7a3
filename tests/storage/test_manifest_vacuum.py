"""The manifest is compacted once a large change settles (``storage/manifest_vacuum.py``) and its
WAL file does not stay at its largest (``manifest_schema.WAL_SIZE_LIMIT``): real SQLite files made
by the real ``Manifest`` and ``GraphStore``."""
from __future__ import annotations

import random
import sqlite3
import threading
import time
from pathlib import Path

from probe_core.intel.store import GraphStore
from probe_core.storage.manifest import Manifest
from probe_core.storage.manifest_vacuum import compact_manifest
from probe_core.storage.manifest_schema import WAL_SIZE_LIMIT


def _fragmented(path: Path) -> None:
    """A manifest whose pages were filled out of key order and then half emptied."""
    Manifest(path).close()
    db = sqlite3.connect(path, isolation_level=None)
    keys = [f"k{random.Random(7).random():.12f}{i}" for i in range(20_000)]
    random.Random(1).shuffle(keys)
    db.execute("BEGIN")
    db.executemany("INSERT INTO meta(key, value) VALUES(?, ?)", ((k, "v" * 60) for k in keys))
    db.execute("COMMIT")
    db.execute("DELETE FROM meta WHERE rowid % 2 = 0")
    db.close()


def _dump(path: Path) -> list:
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT key, value FROM meta ORDER BY key").fetchall()
    finally:
        db.close()


def test_compaction_gives_pages_back_and_keeps_every_row(tmp_path):
    path = tmp_path / "manifest.sqlite"
    _fragmented(path)
    rows, before = _dump(path), path.stat().st_size
    reader = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    reader.execute("BEGIN")
    seen = reader.execute("SELECT COUNT(*) FROM meta").fetchone()  # a search's read, open meanwhile

    def search_ends():
        time.sleep(0.3)
        assert reader.execute("SELECT COUNT(*) FROM meta").fetchone() == seen  # its snapshot was kept
        reader.execute("COMMIT")

    ending = threading.Thread(target=search_ends)
    ending.start()
    saved = compact_manifest(path)
    ending.join()
    reader.close()
    assert saved is not None and saved > 0.3 * before
    assert path.stat().st_size == before - saved
    assert not Path(f"{path}-wal").exists() or Path(f"{path}-wal").stat().st_size == 0
    assert _dump(path) == rows
    Manifest(path).close()  # still a manifest that opens


def test_a_write_in_progress_makes_it_wait_for_the_next_upkeep(tmp_path):
    path = tmp_path / "manifest.sqlite"
    _fragmented(path)
    before = path.stat().st_size
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("INSERT INTO meta(key, value) VALUES('x', 'y')")
    try:
        assert compact_manifest(path, busy_s=0.05) is None
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert path.stat().st_size == before


def test_the_wal_is_truncated_after_a_checkpoint(tmp_path):
    """A bulk write grows the WAL past the limit; after the checkpoint the file is cut back to it,
    though the graph's connection stays open (the owner keeps it open for its whole life)."""
    path = tmp_path / "manifest.sqlite"
    manifest = Manifest(path)
    graph = GraphStore(path)
    try:
        with manifest.transaction() as db:
            db.executemany("INSERT INTO meta(key, value) VALUES(?, ?)", ((f"k{i}", "v" * 500) for i in range(30_000)))
        wal = Path(f"{path}-wal")
        assert wal.stat().st_size > WAL_SIZE_LIMIT  # the transaction's pages went through it
        graph.terms_epoch()  # the graph's connection reads meanwhile
        manifest.set_meta("after", "1")  # its commit's checkpoint folded them in: the WAL starts over
        manifest.set_meta("after", "2")
        assert wal.stat().st_size <= WAL_SIZE_LIMIT
    finally:
        graph.close()
        manifest.close()
