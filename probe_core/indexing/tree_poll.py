"""Polling the workspace tree when inotify cannot watch it (the user's watches or instances ran
out): the file watcher's fallback, so that a tree larger than ``fs.inotify.max_user_watches``
still has its changes picked up, seconds late instead of never.

Each poll is the scanner's own root-confined walk plus a ``stat`` of every entry it lists; the
difference from the previous poll becomes watchfiles-style changes. The caller spaces the polls
by their cost (``last_cost_s``), so polling a large tree takes a bounded share of a core.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping

from watchfiles import Change

from ..scan import IgnoreRules, walk_tree

FileChange = tuple[Change, str]
# (mtime_ns, size, ctime_ns, inode, dev); None: cannot be stat-ed. The ctime catches an edit that
# keeps the size and restores the mtime (see indexing.change_detection).
_Signature = tuple[int, int, int, int, int] | None


class TreePoll:
    """Successive snapshots of one tree; ``changes`` says what differs since the last one."""

    def __init__(self, rules: IgnoreRules, steering_files: Callable[[], list[str]]):
        """``steering_files``: files outside the walk whose changes matter (``.git/HEAD``)."""
        self.rules = rules
        self._steering_files = steering_files
        self._last: dict[str, _Signature] | None = None
        self.dirs: Mapping[str, tuple[int, int]] = {}  # the directories the last poll walked
        self.last_cost_s = 0.0

    def changes(self) -> set[FileChange]:
        """What was added, modified or deleted since the previous call (nothing on the first)."""
        started = time.monotonic()
        now, dirs = self._snapshot()
        before, self._last = self._last, now
        self.dirs = dirs
        self.last_cost_s = time.monotonic() - started
        if before is None:
            return set()
        out: set[FileChange] = set()
        for path, signature in now.items():
            old = before.get(path, ...)
            if old is ...:
                out.add((Change.added, path))
            elif old != signature:
                out.add((Change.modified, path))
        out.update((Change.deleted, path) for path in before.keys() - now.keys())
        return out

    def _snapshot(self) -> tuple[dict[str, _Signature], dict[str, tuple[int, int]]]:
        signatures: dict[str, _Signature] = {}
        dirs: dict[str, tuple[int, int]] = {}
        for listing in walk_tree(self.rules):
            if listing.error is not None or listing.identity is None:
                continue
            dirs[listing.rel] = listing.identity
            if listing.rel:
                signatures[listing.path] = (0, 0, 0, listing.identity[1], listing.identity[0])  # a directory changes by identity only
            for entry in listing.entries:
                if not entry.entered:
                    signatures[entry.path] = _signature(entry.path)
        for path in self._steering_files():
            signatures[path] = _signature(path)
        return signatures, dirs


def _signature(path: str) -> _Signature:
    try:
        info = os.stat(path)  # follows a link to a file, as the scanner does
    except (OSError, ValueError):
        return None
    return info.st_mtime_ns, info.st_size, info.st_ctime_ns, info.st_ino, info.st_dev
