"""The manifest keeps what it must and no more: the dense queue's text is stored compressed."""
from __future__ import annotations

import sqlite3

from probe_core.storage.manifest import ChunkRow, FileRow, Manifest


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
