"""Which indexed chunk holds a given line of a file (the innermost one, when chunks nest)."""
from __future__ import annotations

import bisect
import heapq
from collections.abc import Callable

from ..storage.manifest import ChunkRow
from ..workspace import Workspace
from .index_state import index_state


class _FileChunks:
    """One file's lines cut into segments, each held by the same innermost chunk (or none).

    Built by one sweep over the chunks' boundaries, O(C log C) for C chunks; a line is then found
    by bisection, so mapping L lines costs O((L + C) log C) instead of the O(L × C) of a scan of
    every chunk per line (1.2 s a query on a generated 587 KB file of 1,800 functions)."""

    __slots__ = ("starts", "rows")

    def __init__(self, rows: list[ChunkRow]) -> None:
        by_start = sorted(range(len(rows)), key=lambda i: rows[i].start_line)
        bounds = sorted({r.start_line for r in rows} | {r.end_line + 1 for r in rows})
        active: list[tuple[int, int]] = []  # (span, position in ``rows``): the innermost on top, ties by order
        self.starts: list[int] = []
        self.rows: list[ChunkRow | None] = []
        nxt = 0
        for line in bounds:
            while nxt < len(by_start) and rows[by_start[nxt]].start_line <= line:
                i = by_start[nxt]
                heapq.heappush(active, (rows[i].end_line - rows[i].start_line, i))
                nxt += 1
            while active and rows[active[0][1]].end_line < line:  # ended before this segment
                heapq.heappop(active)
            self.starts.append(line)
            self.rows.append(rows[active[0][1]] if active else None)

    def at(self, line: int) -> ChunkRow | None:
        k = bisect.bisect_right(self.starts, line) - 1
        return self.rows[k] if k >= 0 else None


class ChunkLocator:
    """Line → innermost live chunk, per file; each file's chunk rows are read from the manifest once
    (and kept across searches until the index changes). ``few_lines``: the caller maps a line or
    two per file (graph neighbours): each line is one indexed lookup instead, since a monorepo's
    large files hold hundreds of chunks that a map would read for one line."""

    def __init__(self, ws: Workspace, prior: Callable[[str], float] | None = None, *, few_lines: bool = False) -> None:
        self._ws = ws
        self._files: dict[str, _FileChunks] = {}
        self._prior = prior
        self._priors: dict[str, float] = {}
        self._few_lines = few_lines

    def prior(self, path: str) -> float:
        """How much a match in ``path`` counts (its kind prior, worked out for the files that match
        only; 1.0 when none was given)."""
        if self._prior is None:
            return 1.0
        value = self._priors.get(path)
        if value is None:
            value = self._priors[path] = self._prior(path)
        return value

    def at(self, path: str, line: int) -> ChunkRow | None:
        """The smallest live chunk of ``path`` containing ``line`` (None: no chunk, e.g. a blank
        line); of two as small, the first in line order."""
        chunks = self._files.get(path)
        if chunks is None and self._few_lines:
            return self._ws.manifest.chunk_at(path, line)
        if chunks is None:
            chunks = self._files[path] = index_state(self._ws).file_chunks(self._ws, path, _FileChunks)
        return chunks.at(line)
