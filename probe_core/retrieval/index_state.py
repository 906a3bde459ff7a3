"""What search reads from the manifest that only changes with a write: kept per workspace.

Every write to a workspace's index bumps its generation or its ``state_version`` (``ws.touch()``,
also after each batch of the dense fill), so those two key anything derived from the manifest.
Without this, each search counted the chunks table twice (``COUNT(*)`` over every chunk, the
dense coverage) and re-read every chunk row of the files its graph and exact-match lists touch:
costs that follow the repository's size, not the query (``docs/benchmarks.md``, "Search cost
against repository size").
"""
from __future__ import annotations

import threading
from collections import OrderedDict

from ..per_workspace import PerWorkspace
from ..workspace import Workspace

MAX_FILES = 4096  # files whose chunk map is kept (a few KB each; a map is rebuilt in ~1 ms)
MAX_GLOBS = 32  # path filters whose matching files are kept (a scoped agent asks the same one again)


class IndexState:
    """One workspace's counts and per-file chunk maps, valid for one (generation, state_version)."""

    def __init__(self) -> None:
        self._key: tuple[int, int] | None = None
        self._counts: dict[str, int] | None = None
        self._files: OrderedDict[str, object] = OrderedDict()
        self._globbed: OrderedDict[tuple, list[str]] = OrderedDict()  # keyed by (generation, lexical_version, globs)
        self._lock = threading.Lock()

    def _current(self, ws: Workspace) -> None:
        key = (ws.manifest.generation, ws.state_version)
        if key != self._key:  # the index changed: everything derived from it goes
            self._key, self._counts = key, None
            self._files.clear()

    def counts(self, ws: Workspace) -> dict[str, int]:
        """``ws.manifest.counts()`` as of the current generation and state."""
        with self._lock:
            self._current(ws)
            key, counts = self._key, self._counts
        if counts is None:
            counts = ws.manifest.counts()
            with self._lock:
                if self._key == key:  # not replaced meanwhile by a newer state
                    self._counts = counts
        return dict(counts)

    def file_chunks(self, ws: Workspace, path: str, build):
        """``build(ws.manifest.chunks_for(path))``, kept while the index does not change."""
        with self._lock:
            self._current(ws)
            key, held = self._key, self._files.get(path)
            if held is not None:
                self._files.move_to_end(path)
                return held
        made = build(ws.manifest.chunks_for(path))
        with self._lock:
            if self._key == key:
                self._files[path] = made
                while len(self._files) > MAX_FILES:
                    self._files.popitem(last=False)
        return made


    def paths_matching(self, ws: Workspace, globs: tuple, match) -> list[str]:
        """``match(ws.manifest.file_paths())``: the indexed files a path filter (``globs``) keeps,
        kept until a file is added, changed or removed. Matching the monorepo's 11k paths took
        ~18 ms of every scoped search; the dense fill does not change them
        (``Workspace.lexical_version``)."""
        key = (ws.manifest.generation, ws.lexical_version, globs)
        with self._lock:
            held = self._globbed.get(key)
            if held is not None:
                self._globbed.move_to_end(key)
                return list(held)  # a copy: the caller's to keep or change
        made = match(ws.manifest.file_paths())
        with self._lock:
            self._globbed[key] = made
            while len(self._globbed) > MAX_GLOBS:
                self._globbed.popitem(last=False)
        return list(made)


_states: PerWorkspace[IndexState] = PerWorkspace(lambda _ws: IndexState())


def index_state(ws: Workspace) -> IndexState:
    return _states.get(ws)
