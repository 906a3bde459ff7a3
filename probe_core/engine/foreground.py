"""``probe index`` as the workspace's owner: it indexes in the foreground and serves other processes.

Why: the blocking ``probe index`` holds the workspace's lock for as long as the dense phase takes
(minutes on a large repository). As a bare indexer it answered nobody, so ``probe status`` and
``probe search`` from another shell could only say "try again when it finishes". Run as an
``OwnerEngine`` instead — the same worker, RPC server and answers as ``probe mcp`` and the daemon,
without the file watcher — it serves them meanwhile: status with progress, lexical search from the
moment the lexical phase has stored a file (dense batches yield to searches), code intelligence;
and a ``probe mcp`` started meanwhile attaches to it and takes the index over when it exits.

The command that runs it (``probe_cli/index_verbs.py``) holds the lock, waits for ``complete()``,
raises ``failure()`` at once (a one-shot command does not retry like a server), then closes it.
"""
from __future__ import annotations

import dataclasses
import os
import threading
from pathlib import Path

from .. import environment
from ..errors import ProbeError
from ..indexing.indexer import DENSE_BATCH
from ..records import IndexProgress
from .lock import INFO_FILE, read_owner_info
from .service import OwnerEngine
from .settings import EngineSettings


class ForegroundIndex(OwnerEngine):
    """An owner that runs one full scan, fills dense vectors (unless ``dense=False``) and is done.

    The caller holds the workspace's engine lock (``OwnerEngine`` never takes it)."""

    def __init__(self, root: Path | str, settings: EngineSettings | None = None, *, dense: bool = True):
        base = settings or EngineSettings.from_env()
        # waited on by its user: dense batches as large as the plain indexer's (64; a server's 16 took
        # ~1.3x as long here), unless PROBE_DENSE_BATCH says otherwise; searches still run between them
        batch = base.dense_batch if environment.get("PROBE_DENSE_BATCH") else DENSE_BATCH
        super().__init__(root, dataclasses.replace(base, watch=False, dense_batch=batch), kind="index")
        self._dense = dense
        self._embedded = 0  # chunks this run embedded: the report's chunks_embedded
        self._first = (threading.Event(), {})
        self._sched.waiters.append(self._first)  # the startup scan (always a full one) reports here

    def first_scan(self, timeout: float) -> dict | None:
        """The lexical phase's report (``IndexReport.to_dict()``), or None while it still runs."""
        done, box = self._first
        if not done.wait(timeout):
            return None
        if "error" in box:
            raise box["error"]
        return box["report"]

    def failure(self) -> BaseException | None:
        """What stopped the worker last (it would retry, as a server does), else None."""
        with self._state:
            return self._last_exc

    def progress(self) -> IndexProgress:
        """A copy of the progress, for the command's bar: cheaper to poll than ``index_status``, which
        counts the manifest and the store on every call."""
        with self._state:
            return dataclasses.replace(self._sched.progress)

    def complete(self) -> bool:
        """The full scan is done and, unless ``dense=False``, every chunk has its dense vector."""
        with self._state:
            return self._first[0].is_set() and not self._sched.in_progress()

    def _fill_dense(self) -> None:
        if not self._dense:  # --lexical-only: the queue stays for the next owner
            with self._state:
                self._sched.dense_pending = False
            return
        # the fill counts on from the manifest's total (only this worker writes it): the difference is
        # what it embedded, which a total taken before the scan cannot give (an edit's old chunks go)
        before = self._ws.manifest.counts()["chunks_dense"]
        super()._fill_dense()
        with self._state:
            self._embedded += max(0, self._sched.progress.chunks_embedded - before)

    def embedded(self) -> int:
        """Chunks this run has embedded so far (reused vectors not counted)."""
        with self._state:
            return self._embedded

    def close(self, timeout: float = 10.0) -> None:
        super().close(timeout)
        # engine.json names a socket nobody serves any more: without it a CLI call goes straight to
        # answering by itself instead of trying the socket first
        if read_owner_info(self.probe_dir).get("pid") == os.getpid():
            try:
                (self.probe_dir / INFO_FILE).unlink()
            except FileNotFoundError:
                pass

    def _leave(self, why: str) -> None:
        """The root went away: the worker stops for good, so the command waiting on ``complete()``
        must hear it through ``failure()`` (it would otherwise wait forever in the dense phase)."""
        with self._state:
            self._last_exc = ProbeError(f"{why}; indexing stopped")
        super()._leave(why)

    def index_status(self) -> dict:
        out = super().index_status()
        # the watcher is off because this owner indexes once and exits, not because of PROBE_WATCH=0
        out["watcher_error"] = "probe index does not watch: it indexes once and exits"
        return out

    def shutdown(self) -> dict:
        """``probe stop`` ends daemons only: this process is the user's own command in a terminal."""
        raise ProbeError(f"probe index (pid {os.getpid()}) is indexing this workspace in a terminal; it exits "
                         "when the index is complete")

    def busy(self) -> bool:
        """The worker is still running after ``close`` (a long lexical scan does not stop midway):
        the caller must then leave the lock to the process's exit, not release it."""
        return self._worker is not None and self._worker.is_alive()
