"""The manifest keeps what it must and no more: the dense queue's text is stored compressed."""
from __future__ import annotations

import random
import sqlite3

from probe_core.storage.manifest import SCHEMA_VERSION, ChunkRow, FileRow, Manifest

from .manifest_v5 import to_version_5


def _chunk(path: str, k: int) -> ChunkRow:
    return ChunkRow(f"{path}-{k}", path, k, k * 10 + 1, k * 10 + 9, f"h{k}", None, None, None, False)


def test_queued_text_is_compressed_and_reads_back_exactly(tmp_path):
    m = Manifest(tmp_path / "m.sqlite")
    texts = ["def f():\n    return 1\n" * 40, "naïve ☃ 𝄞 \udcff lone surrogate\r\n", ""]
    m.replace_file(FileRow("a.py", 1, 10, "abc", None), "python", "code", [_chunk("a.py", k) for k in range(3)],
                   texts)
    assert [r[2] for r in m.pending_dense(10)] == texts
    db = sqlite3.connect(tmp_path / "m.sqlite")
    stored = db.execute("SELECT typeof(text), length(text) FROM pending_dense ORDER BY rowid").fetchall()
    assert stored[0][0] == "blob" and stored[0][1] < len(texts[0]) / 4


def test_a_queue_written_before_compression_still_reads(tmp_path):
    m = Manifest(tmp_path / "m.sqlite")
    m.replace_file(FileRow("a.py", 1, 10, "abc", None), "python", "code", [_chunk("a.py", 0)], ["x"])
    with m.transaction() as db:  # as an older Probe wrote it: plain TEXT
        db.execute("UPDATE pending_dense SET text='plain old text'")
    assert m.pending_dense(10) == [("a.py-0", "a.py", "plain old text")]


def _queue_files(m: Manifest, n_files: int, per_file: int = 20) -> list[str]:
    rng = random.Random(7)  # text that does not compress away: the queue takes real pages
    ids = []
    for f in range(n_files):
        path = f"src/f{f}.py"
        chunks = [_chunk(path, k) for k in range(per_file)]
        texts = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz_ \n") for _ in range(1500)) for _ in chunks]
        m.replace_file(FileRow(path, 1, 10, f"h{f}", None), "python", "code", chunks, texts)
        ids += [c.point_id for c in chunks]
    return ids


def test_the_manifest_gives_back_the_pages_of_a_drained_queue(tmp_path):
    """A fully embedded index does not keep the dense queue's size: a new manifest is made with
    incremental auto-vacuum, and marking chunks embedded returns the freed pages to the disk."""
    path = tmp_path / "m.sqlite"
    m = Manifest(path)
    ids = _queue_files(m, 60)
    m.set_fill_order([(1, f"src/f{f}.py") for f in range(60)])
    full = path.stat().st_size + (tmp_path / "m.sqlite-wal").stat().st_size
    for start in range(0, len(ids), 64):
        m.mark_dense_done(ids[start:start + 64])
    assert m.pending_dense(10) == [] and m.counts()["chunks_dense"] == len(ids)
    m.close()  # the last connection checkpoints the WAL into the file
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA auto_vacuum").fetchone()[0] == 2
    assert db.execute("PRAGMA freelist_count").fetchone()[0] < 1024
    db.close()
    assert path.stat().st_size < full / 2


def _as_version(m: Manifest, version: int) -> None:
    """The queue as versions 3 (a path column and its index) and 4 (the column alone) kept it."""
    to_version_5(m._db)
    with m.transaction() as db:
        db.execute("ALTER TABLE pending_dense ADD COLUMN path TEXT NOT NULL DEFAULT ''")
        db.execute("UPDATE pending_dense SET path = (SELECT c.path FROM chunks c WHERE c.point_id = pending_dense.point_id)")
        if version == 3:
            db.execute("CREATE INDEX pending_path ON pending_dense(path)")
        db.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(version),))


def test_a_version_4_manifest_loses_the_queue_path_and_its_queue_reads_the_same(tmp_path):
    """Version 5 keeps no path in the dense queue (a chunk's path is its chunks row's): a version-4
    queue loses the column on open, and reads, ranks and drains as before."""
    path = tmp_path / "m.sqlite"
    m = Manifest(path)
    ids = _queue_files(m, 2, per_file=3)
    m.set_fill_order([(2, "src/f0.py"), (1, "src/f1.py")])
    before = m.pending_dense(10)
    _as_version(m, 4)
    m.close()
    m = Manifest(path)
    assert m.get_meta("schema_version") == str(SCHEMA_VERSION)
    assert "path" not in {r[1] for r in m._db.execute("PRAGMA table_info(pending_dense)")}
    assert m.pending_dense(10) == before and [r[1] for r in before] == ["src/f1.py"] * 3 + ["src/f0.py"] * 3
    m.mark_dense_done(ids[3:])
    assert [r[0] for r in m.pending_dense(10)] == ids[:3]
    m.close()


def test_a_version_3_manifest_loses_the_queue_path_index_and_still_ranks_its_queue(tmp_path):
    path = tmp_path / "m.sqlite"
    m = Manifest(path)
    _queue_files(m, 3, per_file=2)
    _as_version(m, 3)
    m.close()
    m = Manifest(path)
    assert m.get_meta("schema_version") == str(SCHEMA_VERSION)
    names = {r[0] for r in m._db.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    assert "pending_path" not in names and "pending_order" in names
    assert sorted(p for p, _, _ in m.unranked_pending()) == ["src/f0.py", "src/f1.py", "src/f2.py"]
    m.set_fill_order([(5, "src/f2.py"), (9, "src/f0.py")])  # found through chunks(path)
    assert [p for p, _, _ in m.unranked_pending()] == ["src/f1.py"]
    m.set_fill_order([(7, "src/f1.py"), (1, "src/f0.py")])  # ranked once: f0 keeps its 9
    assert [r[1] for r in m.pending_dense(10)] == ["src/f2.py"] * 2 + ["src/f1.py"] * 2 + ["src/f0.py"] * 2
    m.close()
