"""Whether a file changed since it was indexed, from its stat alone, without trusting a stat that
cannot be trusted (git's "racy git" problem and its answer, in one place).

A file is unchanged when its mtime, size, ctime, inode and device all equal what the manifest
recorded. ``(mtime, size)`` alone is not enough: an edit that keeps the size and restores the
mtime (``touch -r``, ``rsync -t``, a build tool, a checkout of a same-size blob, an editor's
backup) would never be indexed. The ctime cannot be set back from user space, and a file replaced
by another (an editor saving through a rename) has a new ``(dev, inode)``.

Even all five can lie when a file is written again within the filesystem's timestamp granularity
(a coarse clock tick) of the moment its stat was taken: the second write leaves the same times. As
git does for its index, a stat taken while the file's mtime or ctime lies within
``RACY_WINDOW_NS`` of the scan's start is recorded *unverified* (``ctime_ns`` 0), so the next scan
hashes the file instead of trusting its stat; once the file is older than the window, the stat the
next scan records is trusted. Unverified rows (and rows migrated from a manifest that had no ctime)
cost one read and hash each, never re-chunking when the content is the same.
"""
from __future__ import annotations

import time

from ..records import ScannedFile
from ..storage.manifest import FileRow

# Wider than any timestamp granularity a local filesystem has (ext4/xfs/btrfs: a clock tick, ~4 ms;
# FAT: 2 s) and than small clock skew on a network filesystem. Costs only a re-hash of files
# written within this long before a scan, at the next scan.
RACY_WINDOW_NS = 3_000_000_000

UNVERIFIED = 0  # ctime_ns of a row whose stat the next scan must not trust


def scan_clock() -> int:
    """The time to call before a scan's stats are taken: the reference of the racy window."""
    return time.time_ns()


def is_unchanged(row: FileRow | None, f: ScannedFile) -> bool:
    """Whether the manifest's ``row`` still describes ``f`` by its stat (False: read and hash it)."""
    return (row is not None and row.ctime_ns != UNVERIFIED
            and (row.mtime_ns, row.size, row.ctime_ns, row.inode, row.dev)
            == (f.mtime_ns, f.size, f.ctime_ns, f.inode, f.dev))


def is_racy(f: ScannedFile, scan_started_ns: int) -> bool:
    """Whether ``f`` could be written again without its stat changing: modified (or its inode
    changed) within the racy window of the scan that took its stat, or in the future."""
    return max(f.mtime_ns, f.ctime_ns) >= scan_started_ns - RACY_WINDOW_NS


def file_row(f: ScannedFile, file_hash: str, scan_started_ns: int, error: str | None = None) -> FileRow:
    """The manifest row for ``f`` hashed to ``file_hash``: its stat, unverified when racy."""
    ctime = UNVERIFIED if is_racy(f, scan_started_ns) else f.ctime_ns
    return FileRow(f.path, f.mtime_ns, f.size, file_hash, error, ctime, f.inode, f.dev)
