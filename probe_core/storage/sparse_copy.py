"""Copying a folder of sparse files without filling their holes.

Qdrant Edge preallocates its files sparsely: each WAL segment is a 32 MB file of which only the
written part has disk blocks (the next segment, made ahead, has almost none), and so are a dense
vector chunk's unused tail and the payload indexes' maps. ``shutil.copytree`` copies every byte,
holes included. The copy of the monorepo's shard that the idle owner optimizes (``edge_optimize``)
took 417 MB where the shard took 263, and once swapped in it kept that size: the owner's upkeep took
main's filled monorepo index from 409 to 544 MB, 101 MB of it WAL. Here only a file's data extents
are copied (``SEEK_DATA`` / ``SEEK_HOLE``) and the copy gets the same length, so its holes stay
holes. A file system without those seeks gets a plain copy.
"""
from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

_CHUNK = 8 * 1024 * 1024


def copy_file(src: str, dst: str) -> str:
    """``shutil.copy2`` with the source's holes kept (``shutil.copytree``'s ``copy_function``)."""
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        size = os.fstat(fin.fileno()).st_size
        try:
            extents = list(_data_extents(fin.fileno(), size))
        except OSError as exc:
            if exc.errno not in (errno.EINVAL, errno.EOPNOTSUPP):
                raise
            extents = [(0, size)]  # no hole seeking here: every byte
        for start, end in extents:
            _copy_range(fin.fileno(), fout.fileno(), start, end)
        fout.truncate(size)  # a trailing hole: the length without the blocks
    shutil.copystat(src, dst)
    return dst


def copy_tree(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, copy_function=copy_file)


def _data_extents(fd: int, size: int):
    """(start, end) of each stretch of ``fd`` that has data, in order."""
    pos = 0
    while pos < size:
        try:
            start = os.lseek(fd, pos, os.SEEK_DATA)
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # nothing but a hole from ``pos`` to the end
                return
            raise
        end = os.lseek(fd, start, os.SEEK_HOLE)
        yield start, end
        pos = end


def _copy_range(fin: int, fout: int, start: int, end: int) -> None:
    while start < end:
        n = min(_CHUNK, end - start)
        data = os.pread(fin, n, start)
        if not data:
            return
        os.pwrite(fout, data, start)
        start += len(data)
