"""A shard is copied for its optimization without filling the holes of its sparse files
(``storage/sparse_copy.py``): same bytes, same length, no more disk blocks than the original."""
from __future__ import annotations

import os

from probe_core.storage import sparse_copy

MB = 1024 * 1024


def _sparse(path, size: int, data_at: list[int]) -> None:
    with open(path, "wb") as f:
        f.truncate(size)
        for offset in data_at:
            f.seek(offset)
            f.write(os.urandom(4096) + b"x" * 60_000)


def _allocated(path) -> int:
    return os.stat(path).st_blocks * 512


def test_holes_stay_holes_and_the_bytes_are_the_same(tmp_path):
    src = tmp_path / "src"
    (src / "wal").mkdir(parents=True)
    _sparse(src / "wal" / "open-3", 32 * MB, [0, 5 * MB])  # written at its head, the rest preallocated
    _sparse(src / "wal" / "open-4", 32 * MB, [])  # a segment made ahead: all hole
    _sparse(src / "middle", 16 * MB, [8 * MB])  # a hole before and after its data
    (src / "dense").write_bytes(os.urandom(3 * MB))  # no hole at all
    sparse_copy.copy_tree(src, tmp_path / "dst")
    for name in ("wal/open-3", "wal/open-4", "middle", "dense"):
        a, b = src / name, tmp_path / "dst" / name
        assert a.read_bytes() == b.read_bytes(), name
        assert os.stat(b).st_size == os.stat(a).st_size
        assert _allocated(b) <= _allocated(a) + 64 * 1024, name  # a plain copy: 32 MB for each segment
        assert os.stat(b).st_mtime_ns == os.stat(a).st_mtime_ns  # copied as ``copy2`` does
    assert _allocated(tmp_path / "dst" / "wal" / "open-4") < MB
