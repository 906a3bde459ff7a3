"""The app's link to the engine: one ``EngineHandle`` for the workspace, opened and closed off the UI thread.

The app is the workspace's owner when no ``probe mcp`` holds it (it then indexes and watches, so
the dashboard shows live work); otherwise it attaches to the running owner and shows that one's
state. Every method here blocks and must be called from a worker thread.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from probe_core.config import load_config
from probe_core.records import SearchRequest

SEARCH_TOP_K = 20


@dataclass(slots=True)
class RateMeter:
    """Chunks embedded per second over the last few status readings (a sliding window)."""

    window_s: float = 10.0
    samples: list[tuple[float, int]] = field(default_factory=list)

    def add(self, count: int, now: float | None = None) -> float | None:
        now = time.monotonic() if now is None else now
        if self.samples and count < self.samples[-1][1]:
            self.samples.clear()  # a rebuild or a new workspace: start over
        self.samples.append((now, count))
        while len(self.samples) > 2 and now - self.samples[0][0] > self.window_s:
            self.samples.pop(0)
        (t0, c0), (t1, c1) = self.samples[0], self.samples[-1]
        if t1 - t0 < 0.5:
            return None
        return (c1 - c0) / (t1 - t0)


class EngineSession:
    """Opens the workspace's engine (owner or attached) and forwards the calls the screens make."""

    def __init__(self, root: Path, settings=None):
        self.root = Path(root).resolve()
        self.settings = settings
        self._handle = None
        self._lock = threading.Lock()
        self.rate = RateMeter()

    @property
    def configured(self) -> bool:
        """Whether the workspace has a ``.probe/config.json`` (no: the app starts on setup)."""
        return load_config(self.root) is not None

    @property
    def is_open(self) -> bool:
        return self._handle is not None

    @property
    def role(self) -> str | None:
        return self._handle.role if self._handle is not None else None

    def open(self) -> str:
        """Become the owner (index + watch) or attach to the running one. Returns the role."""
        from probe_core.engine import open_engine

        with self._lock:
            if self._handle is None:
                self._handle = open_engine(self.root, background=True, settings=self.settings)
            return self._handle.role

    def close(self) -> None:
        with self._lock:
            handle, self._handle = self._handle, None
        if handle is not None:
            handle.close()
        self.rate = RateMeter()

    def reopen(self) -> str:
        """After the preset changed: close and open again, so the owner reads the new config."""
        self.close()
        return self.open()

    def status(self) -> dict:
        """``index_status`` plus the embedding rate the dashboard shows."""
        handle = self._handle
        if handle is None:
            return {"root": str(self.root), "role": None}
        from probe_core.libraries.manage import with_library_summaries

        out = with_library_summaries(handle.index_status())
        progress = out.get("progress") or {}
        embedded = progress.get("chunks_embedded", out.get("chunks_embedded", 0)) or 0
        out["embed_rate"] = self.rate.add(int(embedded))
        return out

    def search(self, request: SearchRequest) -> dict:
        handle = self._require()
        t0 = time.perf_counter()
        out = handle.search(request)
        out["wall_ms"] = (time.perf_counter() - t0) * 1000
        return out

    def open_file(self, path: str, start_line: int | None = None, end_line: int | None = None) -> dict:
        return self._require().open_file(path, start_line, end_line)

    def rescan(self) -> bool:
        """Ask the owner for a full incremental scan now. False when this process is not the owner."""
        handle = self._handle
        impl = getattr(handle, "impl", None)
        if impl is None or getattr(impl, "role", None) != "owner":
            return False
        impl.request_scan(full=True, reason="tui")
        return True

    def _require(self):
        if self._handle is None:
            from probe_core.errors import WorkspaceNotFound

            raise WorkspaceNotFound(f"{self.root} is not set up yet: choose a preset on the setup screen (s)")
        return self._handle
