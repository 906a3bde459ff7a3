"""Stopping cleanly before the disk under ``.probe/`` runs out.

Qdrant Edge writes its WAL and segments through memory maps onto preallocated, sparse files: when
the filesystem fills up, the write that touches a page with no disk block behind it does not fail
with ENOSPC, the process dies of SIGBUS. Opening a shard can allocate too: the first load of a small
index grew it from 22 MB to 92 MB on disk (a fresh appendable segment maps a 32 MB vector chunk and
a 5 MB map per payload index). Probe's crash safety makes even a SIGBUS recoverable (the next run
reconciles), but a user deserves a sentence, not a bus error. So:

* writes stop with ``DiskFull`` while ``PROBE_MIN_FREE_MB`` (default 128 MB) is still free;
* opening a shard needs ``OPEN_MIN_FREE_MB`` (80 MB, what a load may allocate) and says so when it
  is not there. Writes stop above the open threshold, so an index that stopped for lack of space
  still opens for searching.
"""
from __future__ import annotations

import os
from pathlib import Path

from .. import environment
from ..errors import DiskFull

DEFAULT_MIN_FREE_MB = 128
OPEN_MIN_FREE_MB = 80


def min_free_bytes() -> int:
    """The margin kept free: ``PROBE_MIN_FREE_MB`` (0 turns the check off), default 128 MB."""
    raw = environment.get("PROBE_MIN_FREE_MB", "")
    try:
        mb = int(raw) if raw.strip() else DEFAULT_MIN_FREE_MB
    except ValueError:
        mb = DEFAULT_MIN_FREE_MB
    return max(mb, 0) * 1024 * 1024


def ensure_free_space(path: Path | str, *, opening: bool = False) -> None:
    """Raise ``DiskFull`` when the filesystem holding ``path`` has less than the margin free:
    the write margin, or with ``opening`` the smaller one a shard needs to open."""
    need = min_free_bytes()
    if opening:
        need = min(need, OPEN_MIN_FREE_MB * 1024 * 1024)
    if not need:
        return
    path = Path(path)
    while not path.exists() and path != path.parent:  # a store not created yet: its nearest folder
        path = path.parent
    try:
        info = os.statvfs(path)
    except OSError:
        return  # cannot tell (the path is going away): the write itself will say
    free = info.f_bavail * info.f_frsize
    if free >= need:
        return
    if opening:
        raise DiskFull(f"the disk holding {path} has {free // 2**20} MB free; opening the index may need "
                       f"{need // 2**20} MB. Free some space and try again (the index itself is intact)")
    raise DiskFull(f"the disk holding {path} has {free // 2**20} MB free; Probe stops writing its index below "
                   f"{need // 2**20} MB (PROBE_MIN_FREE_MB). Free some space and run `probe index` again: "
                   "it resumes where it stopped")
