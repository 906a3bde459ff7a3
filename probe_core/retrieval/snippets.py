"""Read result text from disk, the authority: snippets and staleness checks."""
from __future__ import annotations

import subprocess
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
        self._committed: dict[tuple[str, str], list[str] | None] = {}

    def committed_lines(self, branch: str, path: str) -> list[str] | None:
        """``path`` as committed on ``branch`` (another branch's version of a file is not on disk)."""
        key = (branch, path)
        if key not in self._committed:
            lines = None
            if branch and not branch.startswith("-") and ".." not in path.split("/"):
                try:
                    out = subprocess.run(["git", "-C", str(self.root), "show", f"{branch}:{path}"],
                                         capture_output=True, timeout=5, check=False)
                    if out.returncode == 0:
                        lines = out.stdout.decode("utf-8", "replace").splitlines()
                except (OSError, subprocess.SubprocessError):
                    lines = None
            self._committed[key] = lines
        return self._committed[key]

    def lines(self, path: str) -> list[str] | None:
        if path not in self._cache:
            try:
                self._cache[path] = read_text(self.root, path).splitlines()
            except (OSError, ProbeError):
                self._cache[path] = None
        return self._cache[path]

    def is_stale(self, path: str, start: int, end: int, chunk_hash: str, *, branch: str | None = None) -> bool:
        lines = self.committed_lines(branch, path) if branch else self.lines(path)
        if lines is None or end > len(lines):
            return True
        return short_hash("\n".join(lines[start - 1:end])) != chunk_hash

    def snippet(self, path: str, start: int, end: int, max_lines: int = SNIPPET_LINES, *,
                branch: str | None = None) -> str:
        lines = self.committed_lines(branch, path) if branch else self.lines(path)
        if lines is None:
            return ""
        return "\n".join(lines[start - 1:min(end, start + max_lines - 1)])
