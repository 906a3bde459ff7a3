"""What the owner's worker does next: the scan queue, the dense fill, and yielding to searches.

An owner engine (``engine/service.py``) runs one worker thread that does every write. This module
is its schedule, apart from opening backends and answering:

* scans requested (the first full scan at start, the watcher's batches, ``probe index``, a
  library's ``store``) are merged while one runs, and the callers that wait for one are told when
  it is done (``scan_and_wait``); a scan runs the lexical phase only (``index_workspace(dense=False)``),
  so a change is searchable within a moment;
* dense vectors are filled in small batches (``fill_dense``) that yield whenever a search runs
  (``searching``: it also stops the embedding in flight) or a scan waits: searches never queue
  behind the embedder, nor share the cores with it;
* the progress ``index_status`` reports, and whether indexing is still in progress;
* store upkeep: once the fill has finished and the owner has been idle a while, an Edge shard that
  was written a lot since it was last optimized is optimized in a child process on a copy
  (``storage/edge_optimize.py``), so that no search waits behind it; then the manifest is
  compacted and the shard's write-ahead log cut back to one segment (``storage/edge_wal.py``).

The engine keeps its own state under the schedule's lock (``lock``, ``wake``), so one snapshot
covers both, and passes in what a step must tell it (``healthy``, ``progressed``, ``heartbeat``).
"""
from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import BackendUnavailable, ProbeError
from ..records import IndexProgress
from ..storage.edge_optimize import optimize_aside
from ..storage.manifest_vacuum import compact_manifest

if TYPE_CHECKING:
    from ..workspace import Workspace
    from .indexer import IndexReport

log = logging.getLogger("probe.engine")  # the owner engine's log, as before the split


CHECKS = frozenset({"periodic", "startup"})  # scan reasons that look for changes; none is known yet
# Store upkeep: optimize once the points written since the last optimization reach this share of the
# collection, and at least this many (a small shard gains nothing: Edge plans no work below ~10 MB).
OPTIMIZE_SHARE = 0.2
OPTIMIZE_MIN_POINTS = 20_000
UNOPTIMIZED_KEY = "store_unoptimized_points"  # manifest meta: the count, kept across restarts


class IndexSchedule:
    """The owner worker's queue of scans and dense work, and the progress it reports."""

    def __init__(self, root: Path | str, *, stop: threading.Event, dense_batch: int,
                 healthy: Callable[[], None], progressed: Callable[[IndexProgress | None], None],
                 heartbeat: Callable[[], None]):
        self.root = root
        self.lock = threading.Lock()
        self.wake = threading.Condition(self.lock)
        self.dense_batch = dense_batch
        self._stop = stop
        self._healthy, self._progressed, self._heartbeat = healthy, progressed, heartbeat
        self.first_scan_done = threading.Event()
        self.progress = IndexProgress(phase="starting")
        self._full = True  # the first scan is a full one
        self._paths: set[str] = set()
        self._reasons: set[str] = {"startup"}
        self._running_reasons: set[str] = set()  # the reasons of the scan running now (``pending``)
        self.scanning = False
        self.waiters: list[tuple[threading.Event, dict]] = []  # scan_and_wait callers, told when done
        self.dense_pending = True
        self.searches = 0
        self._interrupt: Callable[[], bool] | None = None  # stops the fill's embedding in flight
        self._may_interrupt = True  # False from an interrupt until the fill stores a vector again
        self._embedded_at_interrupt = 0
        self.scans_completed = 0
        self.last_report: dict | None = None
        self.repaired: str | None = None  # why the index was rebuilt on open; the next scan reports it
        self.optimize_wanted = False  # the store is due an optimization (``upkeep_due``)
        self._writes_seen: tuple[int, int] = (0, 0)  # (id of the store, its write counter) last counted

    # -- requests ----------------------------------------------------------------------------
    def request(self, paths=(), *, full: bool = False, reason: str = "changes") -> None:
        with self.wake:
            if full:
                self._full = True
            else:
                self._paths.update(paths)
            self._reasons.add(reason)
            self.wake.notify_all()

    def requested(self) -> bool:
        """A scan waits to run."""
        return self._full or bool(self._paths)

    def scan_and_wait(self, paths: set[str], *, full: bool, reason: str, timeout: float) -> dict:
        """Request a scan and wait for its report (``IndexReport.to_dict()``)."""
        done, box = threading.Event(), {}
        with self.wake:
            self._paths.update(paths)
            self._full = self._full or full
            self._reasons.add(reason)
            self.waiters.append((done, box))
            self.wake.notify_all()
        if not done.wait(timeout):
            raise BackendUnavailable("indexing did not finish in time; it goes on in the owner process")
        if "error" in box:
            exc = box["error"]
            raise exc if isinstance(exc, ProbeError) else ProbeError(f"indexing failed: {exc}")
        return box["report"]

    def pending(self) -> int:
        """Requested and running scans of changes (the periodic safety rescan and the startup scan
        only look for changes: they are none)."""
        with self.lock:
            requested = len(self._paths) + int(self._full and bool(self._reasons - CHECKS))
            running = int(self.scanning and bool(self._running_reasons - CHECKS))
        return requested + running

    def in_progress(self) -> bool:
        """The first scan, a scan or dense work is still to do (call with ``lock`` held)."""
        return not self.first_scan_done.is_set() or self.scanning or self.requested() or self.dense_pending

    # -- the lexical phase -------------------------------------------------------------------
    def scan(self, ws: Workspace) -> tuple[IndexReport, bool]:
        """Run the requested scan; returns its report and whether it was work (the watcher's
        periodic no-op rescan is not: it would keep an idle daemon alive forever). A failed scan
        is requested again: nothing requested is lost."""
        from .indexer import index_workspace

        with self.wake:
            full, paths, reasons = self._full, set(self._paths), set(self._reasons)
            self._full, self._paths, self._reasons = False, set(), set()
            self._running_reasons = reasons
            waiters, self.waiters = self.waiters, []
            self.scanning = True
            self.progress.phase = "scanning"
            self.progress.message = ""
        try:
            targets = None if full else self.expand(ws, paths)
            log.info("scan (%s): %s", ", ".join(sorted(reasons)) or "request",
                     "full" if targets is None else f"{len(targets)} paths")
            report = index_workspace(ws, dense=False, paths=targets, progress=self.on_progress)
        except BaseException as exc:
            with self.wake:  # try again later: nothing requested is lost
                self._full = self._full or full
                self._paths.update(paths)
                self._reasons.update(reasons)
            for done, box in waiters:
                box["error"] = exc
                done.set()
            raise
        finally:
            with self.lock:
                self.scanning = False
        if (why := self.repaired) is not None and not report.reconciled:
            report.reconciled = {"cause": f"damaged index files ({why.split(' (', 1)[0]})", "rebuilt": "from the files"}
            self.repaired = None
        for done, box in waiters:
            box["report"] = report.to_dict()  # the same report `probe index` prints when it indexes itself
            done.set()
        self.count_writes(ws)
        with self.lock:
            self.scans_completed += 1
            self.last_report = {k: v for k, v in report.to_dict().items() if k != "errors"}
            self.last_report["errors"] = [{"path": p, "error": e} for p, e in report.errors[:10]]
            self.dense_pending = True
            self.progress.phase = "dense"
        worked = bool(reasons - {"periodic"} or report.files_indexed or report.files_deleted or report.files_retagged)
        return report, worked

    def expand(self, ws: Workspace, paths: set[str]) -> list[str] | None:
        """Changed paths → files to re-index; None asks for a full incremental scan (a directory
        appeared or moved, which the scanner must walk)."""
        known: list[str] | None = None
        out: set[str] = set()
        for rel in paths:
            abs_path = os.path.join(self.root, rel)
            if os.path.isdir(abs_path):  # os.path's checks never raise: one odd path cannot stop the scan
                return None
            out.add(rel)
            if not os.path.lexists(abs_path):  # a deleted directory takes its files with it
                if known is None:
                    known = ws.manifest.file_paths()
                prefix = rel.rstrip("/") + "/"
                out.update(k for k in known if k.startswith(prefix))
        return sorted(out)

    def on_progress(self, p: IndexProgress) -> None:
        with self.lock:
            mine = self.progress
            if p.phase != "done":  # a lexical scan ending is not the end: dense vectors follow
                mine.phase = p.phase
            mine.files_scanned, mine.files_total = p.files_scanned, p.files_total
            mine.chunks_indexed, mine.chunks_embedded = p.chunks_indexed, p.chunks_embedded
            mine.chunks_total = p.chunks_total

    # -- the dense phase ---------------------------------------------------------------------
    def fill_dense(self, ws: Workspace) -> None:
        """Embed queued chunks until a search or a scan should go first, or none are left."""
        from .indexer import fill_dense

        counts = ws.manifest.counts()
        with self.lock:
            p = self.progress
            p.phase, p.chunks_total, p.chunks_embedded = "dense", counts["chunks"], counts["chunks_dense"]
            p.chunks_indexed = counts["chunks"]
        with self.lock:
            self._interrupt = getattr(ws.embedder, "interrupt", None)
        try:
            filled = fill_dense(ws, state=p, batch=self.dense_batch, should_stop=self.should_yield,
                                progress=self._stored)
        finally:
            with self.lock:
                self._interrupt = None
        if filled:
            self._healthy()
        if self._stop.is_set() or self._wait_for_foreground():
            return
        with self.wake:
            yielded_to_scan = self.requested()
        if not yielded_to_scan:
            remaining = ws.manifest.counts()
            if remaining["chunks_dense"] >= remaining["chunks"] or not ws.manifest.pending_dense(1):
                ws.store.flush()
                wanted = self._optimization_due(ws)
                with self.lock:
                    self.dense_pending = False
                    self.optimize_wanted = wanted
                    self.progress.chunks_embedded = remaining["chunks_dense"]

    def _wait_for_foreground(self, limit_s: float = 5.0) -> bool:
        """The fill stopped for a search: wait until none runs (at most ``limit_s``: the worker's
        loop still passes by, for a scan, a stop, the heartbeat). False when no search held it back."""
        deadline = time.monotonic() + limit_s
        with self.wake:
            if not self.searches:
                return False
            while self.searches and not (self._stop.is_set() or self.requested()):
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self.wake.wait(left)
        return True

    def should_yield(self) -> bool:
        """Asked before each batch and each sub-batch of the fill."""
        self._heartbeat()  # a long dense fill must not look like an abandoned workspace
        return self._stop.is_set() or self.searches > 0 or self.requested()

    def _stored(self, p: IndexProgress) -> None:
        """A batch of the fill was stored: if it held a vector, the next search may interrupt again."""
        with self.lock:
            if p.chunks_embedded > self._embedded_at_interrupt:
                self._may_interrupt = True
        self._progressed(p)

    @contextmanager
    def searching(self):
        """A search (or a code-intelligence answer) runs: the fill's embedding in flight stops (an
        embedder that can be interrupted), and none starts meanwhile. Not twice in a row without a
        vector stored between: searches closer together than one sub-batch's time would otherwise
        stop every sub-batch before it finished, and the fill would make no progress at all."""
        with self.lock:
            self.searches += 1
            interrupt = self._interrupt if self._may_interrupt else None
        if interrupt is not None and interrupt():
            with self.lock:
                self._may_interrupt, self._embedded_at_interrupt = False, self.progress.chunks_embedded
        try:
            yield
        finally:
            with self.wake:
                self.searches -= 1
                self.wake.notify_all()  # a fill waiting on it goes on

    # -- store upkeep ------------------------------------------------------------------------
    def count_writes(self, ws: Workspace) -> int | None:
        """Points written to an Edge store since its last optimization (None: another store,
        which optimizes itself), the manifest's count plus what this process wrote since."""
        store = ws.store
        if not hasattr(store, "swap_in"):
            return None
        seen_store, seen = self._writes_seen
        delta = store.writes - (seen if seen_store == id(store) else 0)
        raw = ws.manifest.get_meta(UNOPTIMIZED_KEY)
        total = (int(raw) if raw else store.count()) + delta  # no count yet: an index never optimized
        if delta or not raw:
            ws.manifest.set_meta(UNOPTIMIZED_KEY, str(total))
        self._writes_seen = (id(store), store.writes)
        return total

    def _optimization_due(self, ws: Workspace) -> bool:
        unoptimized = self.count_writes(ws)
        return unoptimized is not None and unoptimized >= max(OPTIMIZE_MIN_POINTS, OPTIMIZE_SHARE * store_points(ws))

    def upkeep_due(self, idle_s: float, wait_s: float) -> bool:
        """The store is due an optimization and the owner has been idle ``wait_s`` (0: never); call
        with ``lock`` held."""
        return self.optimize_wanted and wait_s > 0 and idle_s >= wait_s and not self.requested()

    def optimize_store(self, ws: Workspace) -> bool | None:
        """Optimize the store beside the one searches use (``optimize_aside``), then compact the
        manifest (``compact_manifest``); a scan requested or a stop meanwhile abandons the first
        (both are tried again after the next fill)."""
        log.info("optimizing the store in a child process")
        result = optimize_aside(ws.store, abandon=lambda: self._stop.is_set() or self.requested())
        if result is not None:  # done, or nothing to do: count from here
            ws.manifest.set_meta(UNOPTIMIZED_KEY, "0")
            self._writes_seen = (id(ws.store), ws.store.writes)
            compact_manifest(ws.manifest.path)  # the same large change left its pages part-empty
            try:
                ws.store.roll_wal()  # the open log segment the fill left part-written: up to 32 MB
            except Exception:  # noqa: BLE001 - only a smaller log is lost: the points are as they were
                log.warning("cutting the store's log back failed", exc_info=True)
        log.info("store optimization: %s", {True: "done", False: "nothing to do", None: "abandoned"}[result])
        with self.lock:
            self.optimize_wanted = False
        return result

    # -- what index_status shows ---------------------------------------------------------------
    def failed(self, message: str) -> None:
        """A step failed (call with ``lock`` held): the progress says so until the next one."""
        self.progress.phase = "error"
        self.progress.message = message
        self.scanning = False

    def progress_dict(self) -> dict:
        """The progress as ``index_status`` reports it (call with ``lock`` held)."""
        p = self.progress
        return {"phase": p.phase, "files_scanned": p.files_scanned, "files_total": p.files_total,
                "chunks_indexed": p.chunks_indexed, "chunks_embedded": p.chunks_embedded,
                "chunks_total": p.chunks_total}


def store_points(ws: Workspace) -> int:
    """Points in the workspace's store, by the manifest's count (no store query)."""
    return ws.manifest.counts()["chunks"]
