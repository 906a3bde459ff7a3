"""Whether an owner's workspace root is still there: a repository moved or deleted while its owner
runs would otherwise keep a daemon (or a ``probe mcp``) holding an index nobody can reach until
``probe stop`` or a reboot. The owner checks once a second (one ``stat``) and exits when it is gone."""
from __future__ import annotations

import os
from pathlib import Path


class RootPresence:
    """The root's identity (device, inode) at start; ``gone()`` when the path no longer names it."""

    def __init__(self, root: Path | str):
        self.root = str(root)
        self._ident = self._stat()

    def _stat(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.root)
        except OSError:
            return None
        return (st.st_dev, st.st_ino)

    def gone(self) -> str | None:
        """Why the root is gone (moved or deleted, or replaced by another directory), else None."""
        if self._ident is None:
            return None  # never seen: nothing to compare with
        now = self._stat()
        if now is None:
            return f"the workspace root {self.root} no longer exists (moved or deleted)"
        if now != self._ident:
            return f"the workspace root {self.root} is now another directory (the repository was moved or replaced)"
        return None
