"""Which indexed chunk holds a given line of a file (the innermost one, when chunks nest)."""
from __future__ import annotations

from ..storage.manifest import ChunkRow
from ..workspace import Workspace


class ChunkLocator:
    """Line → innermost live chunk, per file; each file's chunk rows are read from the manifest once."""

    def __init__(self, ws: Workspace, priors: dict[str, float] | None = None) -> None:
        self._ws = ws
        self._rows: dict[str, list[ChunkRow]] = {}
        self._priors = priors or {}

    def prior(self, path: str) -> float:
        """How much a match in ``path`` counts (its kind prior; 1.0 when none was given)."""
        return self._priors.get(path, 1.0)

    def at(self, path: str, line: int) -> ChunkRow | None:
        """The smallest live chunk of ``path`` containing ``line`` (None: no chunk, e.g. a blank line)."""
        rows = self._rows.get(path)
        if rows is None:
            rows = self._rows[path] = self._ws.manifest.chunks_for(path)
        inside = [r for r in rows if r.start_line <= line <= r.end_line]
        return min(inside, key=lambda r: r.end_line - r.start_line) if inside else None
