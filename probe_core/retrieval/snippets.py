"""Read result text from disk, the authority: snippets and staleness checks."""
from __future__ import annotations

from pathlib import Path

from ..errors import ProbeError
from ..records import short_hash
from ..scan import read_text

SNIPPET_LINES = 20


class FileLines:
    """Lines of the files one search touches, each file read once."""

    def __init__(self, root: Path):
        self.root = root
        self._cache: dict[str, list[str] | None] = {}

    def lines(self, path: str) -> list[str] | None:
        if path not in self._cache:
            try:
                self._cache[path] = read_text(self.root, path).splitlines()
            except (OSError, ProbeError):
                self._cache[path] = None
        return self._cache[path]

    def is_stale(self, path: str, start: int, end: int, chunk_hash: str) -> bool:
        lines = self.lines(path)
        if lines is None or end > len(lines):
            return True
        return short_hash("\n".join(lines[start - 1:end])) != chunk_hash

    def snippet(self, path: str, start: int, end: int, max_lines: int = SNIPPET_LINES) -> str:
        lines = self.lines(path)
        if lines is None:
            return ""
        return "\n".join(lines[start - 1:min(end, start + max_lines - 1)])
