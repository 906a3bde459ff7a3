"""The owner's engine: opens the workspace, indexes in the background, watches, and answers.

One *worker* thread does every write, in this order of priority:

1. open the workspace and its backends (retrying with backoff while the store or the embedder is
   unreachable; the process stays up and reports ``backend_reachable: false``);
2. run a requested scan: the first full scan at start, then the watcher's batches, lexical phase
   only, so a change is searchable within a moment;
3. fill dense vectors in small batches, yielding whenever a search runs (which also stops the
   embedding in flight) or a scan waits: searches never queue behind the embedder.

Steps 2 and 3 are scheduled by ``indexing/scheduler.py`` (the scan queue, the dense fill, the
progress); this module keeps the backends healthy and answers. Attached processes reach the same
answers through ``surface.py`` (the RPC methods, derived from the ``Engine`` protocol).

Searches, ``open_file`` and ``index_status`` run on the callers' threads (MCP tool threads, RPC
connection threads) and only read. The workspace's store and manifest are thread-safe for one
writer and many readers.
"""
from __future__ import annotations

import logging
import os
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import BackendUnavailable, IndexConfigMismatch, IndexDamaged, ProbeError
from ..indexing.scheduler import IndexSchedule
from ..private_dir import ensure_private_dir
from ..records import IndexProgress, SearchRequest
from ..redaction import redact
from .lock import socket_path_for, write_owner_info
from .malloc_arenas import released_around
from .root_check import RootPresence
from .settings_digest import settings_digest
from .settings import EngineSettings

if TYPE_CHECKING:
    from ..indexing.watcher import ChangeBatch, RepoWatcher
    from ..workspace import Workspace

log = logging.getLogger("probe.engine")

CAPABILITIES = {"search": True, "open_file": True, "lexical": True, "dense": True, "rerank": False,
                "code_intel": False, "memory": True}
REPAIR_PENDING = "repair pending: this Probe server rebuilds the index from the files by itself"


def _close_quietly(ws: Workspace) -> None:
    try:
        ws.close()
    except Exception:  # noqa: BLE001 - the failure that made us close is the one to report
        log.debug("closing a workspace that failed to open failed too", exc_info=True)


def _note_seen(ws: Workspace, min_interval_s: float = 0.0) -> None:
    from ..memory.seen import note_seen

    if not ws.profile.records_project:  # libraries have their own registry (libraries.json)
        return
    note_seen(ws, min_interval_s=min_interval_s)


class OwnerEngine:
    """The engine of the process that holds the workspace's owner lock."""

    role = "owner"

    def __init__(self, root: Path | str, settings: EngineSettings | None = None, *, serve_rpc: bool = True,
                 probe_dir: Path | None = None, kind: str = "mcp"):
        self.root = Path(os.path.realpath(root))
        self.kind = kind  # mcp | daemon | index (daemon.py, foreground.py): in engine.json and index_status
        self._own_probe_dir = probe_dir  # None: root/.probe (a project); set: a library's index dir
        self.probe_dir = Path(probe_dir) if probe_dir is not None else self.root / ".probe"
        self.settings = settings or EngineSettings.from_env()
        self._serve_rpc = serve_rpc
        self._ws: Workspace | None = None
        self._stop = threading.Event()
        self._sched = IndexSchedule(self.root, stop=self._stop, dense_batch=self.settings.dense_batch,
                                    healthy=self._healthy, progressed=self._progressed, heartbeat=self._heartbeat)
        self._state = self._sched.lock  # one lock for the engine's state and the schedule's: one snapshot
        self._wake = self._sched.wake
        self._ready = threading.Event()  # backends opened (or failed: see _backend_ok)
        self._needs_open = True  # (re)open the workspace and store before the next step
        self._backend_ok: bool | None = None
        self._last_error: str | None = None
        self._last_exc: BaseException | None = None
        self._started_at = time.time()
        self._last_activity = time.monotonic()  # last RPC request or finished piece of work (idle exit)
        self.shutdown_requested = threading.Event()  # a daemon's ``probe stop`` (or its root gone)
        self._root = RootPresence(self.root)
        self._seen_at = time.monotonic()  # the heartbeat's last registry record (_open_backends records too)
        self._warmed = False
        self._worker: threading.Thread | None = None
        self._watcher: RepoWatcher | None = None
        self._rpc = None
        self.socket_path: Path | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> OwnerEngine:
        """Listen for attached processes first (they may already be waiting), then index."""
        ensure_private_dir(self.probe_dir)
        if self._serve_rpc:
            from .rpc import RpcServer

            self.socket_path = socket_path_for(self.probe_dir)
            self._rpc = RpcServer(self.socket_path, self.dispatch)
            self._rpc.start()
            write_owner_info(self.probe_dir, self.socket_path, kind=self.kind,
                             settings=settings_digest(self.probe_dir))
        self._worker = threading.Thread(target=self._work, name="probe-indexer", daemon=True)
        self._worker.start()
        return self

    def close(self, timeout: float = 10.0) -> None:
        t0 = time.perf_counter()
        self._stop.set()
        with self._wake:
            self._wake.notify_all()
        if self._watcher is not None:
            self._watcher.stop()
        if self._rpc is not None:
            self._rpc.close()
        if self._worker is not None:
            self._worker.join(timeout=timeout)
            if self._worker.is_alive():
                log.warning("indexer still busy after %.0f s; leaving it (the next start reconciles)", timeout)
                return
        if self._ws is not None:
            try:
                self._ws.close()
            except Exception:
                log.exception("closing the workspace failed")
        log.info("owner engine closed in %.2f s", time.perf_counter() - t0)

    # -- requests from the watcher ---------------------------------------------------------
    def request_scan(self, paths=(), *, full: bool = False, reason: str = "changes") -> None:
        self._sched.request(paths, full=full, reason=reason)

    def _on_batch(self, batch: ChangeBatch) -> None:
        self.request_scan(batch.paths, full=batch.full_scan, reason=batch.reason)

    # -- worker ------------------------------------------------------------------------------
    def _work(self) -> None:
        backoff = 1.0
        while not self._root_left():
            try:
                if self._needs_open:
                    self._open_backends()
                self._heartbeat()
                with self._wake:
                    scan, upkeep = self._sched.requested(), False
                    if not scan and not self._sched.dense_pending:
                        self._set_phase("idle")
                        upkeep = self._sched.upkeep_due(time.monotonic() - self._last_activity, self.settings.optimize_idle_s)
                        if not upkeep:
                            self._wake.wait(timeout=1.0)
                            continue
                if scan:
                    self._scan()
                elif upkeep:  # searches go on meanwhile: the work is in a child process
                    self._sched.optimize_store(self._ws)
                else:
                    self._fill_dense()
                backoff = 1.0
            except ProbeError as exc:
                self._fail(exc)
                wait = 60.0 if isinstance(exc, IndexConfigMismatch) else backoff
                backoff = min(backoff * 2, self.settings.max_backoff_s)
                with self._wake:
                    self._wake.wait(timeout=wait)
            except Exception as exc:  # a bug: keep serving, say so in index_status
                log.exception("indexer failed")
                self._fail(exc, internal=True)
                backoff = min(backoff * 2, self.settings.max_backoff_s)
                self._stop.wait(backoff)

    def _heartbeat(self) -> None:
        """Re-record the workspace (``last_seen_at``) every ``record_interval_s`` while the engine runs,
        idle or not (the worker passes here at least every second when idle, and between dense
        batches): ``probe prune`` on another machine sharing the Qdrant server knows a live workspace
        only by it. A clock check between records; never raises."""
        if self._root_left():
            return
        now = time.monotonic()
        if self._ws is None or self._needs_open or now - self._seen_at < self.settings.record_interval_s:
            return
        self._seen_at = now  # also after a failure: retry next interval, do not hammer a down server
        try:
            _note_seen(self._ws)
        except Exception:  # noqa: BLE001 - note_seen logs its own failures; nothing here may stop the worker
            log.debug("registry heartbeat failed", exc_info=True)

    def _root_left(self) -> bool:
        """A project's root moved or deleted: leave (``_leave``) and say True."""
        if self._own_probe_dir is not None or self._stop.is_set() or (why := self._root.gone()) is None:
            return self._stop.is_set()
        self._leave(why)
        return True

    def _leave(self, why: str) -> None:
        """The root went away: stop owning it. A daemon ends its loop; a ``probe mcp`` gets SIGTERM
        (its handler closes the engine and exits), since its client cannot use it any more. Only a
        process that handles SIGTERM gets it: an owner inside the app or a test process (no handler)
        would otherwise kill its host without restoring the terminal or reporting anything."""
        import signal

        log.warning("%s: this owner (pid %d) exits", why, os.getpid())
        self._stop.set()
        self.shutdown_requested.set()
        if self.kind == "mcp" and signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, signal.SIG_IGN, None):
            os.kill(os.getpid(), signal.SIGTERM)

    def _fail(self, exc: BaseException, *, internal: bool = False) -> None:
        msg = redact(f"internal error: {type(exc).__name__}: {exc}" if internal else str(exc))
        with self._state:
            if self._last_error is None:  # a daemon's idle clock runs from the first failure, not from
                self._last_activity = time.monotonic()  # the last finished step (maybe long ago)
            self._last_error = msg
            self._last_exc = exc
            if isinstance(exc, (BackendUnavailable, IndexConfigMismatch)) or self._needs_open:
                self._backend_ok = False
            self._sched.failed(msg)
        self._ready.set()  # waiting searches get the error instead of a timeout
        log.warning("indexing paused: %s", msg)

    def _open_backends(self) -> None:
        from ..indexing.indexer import check_identity, damage_of, rebuild
        from ..workspace import Workspace

        if self._ws is None:
            ws = Workspace.open(self.root, probe_dir=self._own_probe_dir)  # creates config.json on a first run
            try:
                if (why := damage_of(ws)) is not None:  # damaged files under .probe/: start over from the tree
                    log.warning("%s; rebuilding the index from the files", why.split("; run `probe")[0])
                    rebuild(ws)
                    self._sched.repaired = why  # the next scan's report says so (`probe index` prints it)
                _ = ws.manifest, ws.store  # build both before other threads can race to
            except BaseException:  # the next try opens its own: close what this one opened
                _close_quietly(ws)
                raise
            self._ws = ws
        ws = self._ws
        # Adopt the embedding identity (on a first run) before any search can read it half-written.
        check_identity(ws, adopt=True)
        ws.store.ensure_collection(ws.embedder.dimensions)
        self._needs_open = False
        self._healthy()
        self._ready.set()
        _note_seen(ws)  # the workspace registry (`probe prune`); never raises
        if self._watcher is None and self.settings.watch and not self._stop.is_set():
            self._start_watcher()

    def _healthy(self) -> None:
        """A step that needed the backends just worked."""
        with self._state:
            self._backend_ok, self._last_error, self._last_exc = True, None, None

    def _warm_up(self, ws: Workspace) -> None:
        """Once, after the first scan: load the model and build what the first search would
        (``retrieval/warm.py``: ~1.4 s on a monorepo), the freed heap handed back before and after."""
        if self._warmed:
            return
        self._warmed = True
        from ..retrieval.warm import prepare_for_queries

        released_around(lambda: prepare_for_queries(ws))

    def _start_watcher(self) -> None:
        from ..indexing.watcher import RepoWatcher

        ws = self._ws
        rules = ws.profile.ignore_rules(self.root) if ws is not None else None
        self._watcher = RepoWatcher(self.root, self._on_batch, self.settings.watch_settings(), rules=rules,
                                    on_change=self._files_changed)  # a library's rules also keep PDFs
        self._watcher.start()

    def _files_changed(self) -> None:
        # Search answers are cached per index state; a file edit that is not indexed yet still
        # changes snippets and `stale` flags, so cached answers stop counting right away.
        if self._ws is not None:
            self._ws.touch(lexical=False)  # the index itself has not changed (yet)

    def _watching(self) -> bool:
        return self._watcher is not None and self._watcher.running

    def _scan(self) -> None:
        ws = self._ws
        _report, worked = self._sched.scan(ws)
        if worked:
            with self._state:
                self._last_activity = time.monotonic()
        self._healthy()
        self._sched.first_scan_done.set()
        _note_seen(ws, min_interval_s=300.0)
        self._warm_up(ws)  # after the lexical index: a slow or absent embedder must not delay it

    def _fill_dense(self) -> None:
        self._sched.fill_dense(self._ws)

    def _progressed(self, _p: IndexProgress | None = None) -> None:
        """A dense batch was embedded and stored: the backends work again, so an
        error from an earlier attempt no longer describes this engine (``index_status``, searches'
        "paused" note, ``probe index --wait``'s stuck check), and the daemon is busy, not idle."""
        with self._state:
            self._last_activity = time.monotonic()
            if self._last_error is not None and not self._needs_open:
                self._backend_ok, self._last_error, self._last_exc = True, None, None

    def _set_phase(self, phase: str) -> None:
        self._sched.progress.phase = phase

    # -- answers -----------------------------------------------------------------------------
    @contextmanager
    def _searching(self):
        """While a search runs, the fill yields (``IndexSchedule.searching``); it is activity (upkeep waits)."""
        with self._sched.searching():
            yield
        with self._state:
            self._last_activity = time.monotonic()

    def _workspace(self) -> Workspace:
        """The open workspace, waiting (a bounded time) for the worker to open it."""
        self._ready.wait(timeout=self.settings.ready_timeout_s)
        with self._state:
            ws, ok, err, exc = self._ws, self._backend_ok, self._last_error, self._last_exc
        if isinstance(exc, IndexConfigMismatch):
            raise IndexConfigMismatch(err)
        # Once something is indexed, a search is worth trying even while a backend hiccups (the
        # lexical side needs no embedder); before that, the reason it cannot be is the answer.
        if ws is None or (ok is False and not self._sched.first_scan_done.is_set()):
            if err:
                raise BackendUnavailable(f"the index backend is unavailable: {err} (Probe keeps retrying; "
                                         "index_status shows progress)")
            raise BackendUnavailable("Probe is still opening the index (loading the embedding model); "
                                     "try again in a few seconds")
        return ws

    def search(self, request: SearchRequest | str, **options) -> dict:
        from .answers import EMPTY_INDEX, note_pending_update, search_answer

        request = SearchRequest.of(request, **options)
        ws = self._workspace()
        if not self._watching():
            ws.touch(lexical=False)  # nobody tells us about edits: never answer from the cache
        with self._searching():
            with self._repairing():
                out = search_answer(ws, request)
        with self._state:
            first_index_running = not self._sched.first_scan_done.is_set() and out["index_generation"] == 0
            in_progress = self._sched.in_progress()
            p = self._sched.progress
            files_scanned, files_total = p.files_scanned, p.files_total
            ok, err = self._backend_ok, self._last_error
        out["indexing_in_progress"] = in_progress
        note_pending_update(out, 0 if first_index_running else self._pending_changes())
        if ok is False and err:
            out["status"] = "degraded"
            note = f"indexing is paused ({err}); Probe keeps retrying"
            out["message"] = f"{out['message']}; {note}" if out.get("message") else note
        if first_index_running:
            out["status"] = "uncertain"
            note = (f"the first index of this repository is still being built ({files_scanned}/{files_total} "
                    "files scanned): results cover only what is indexed so far; grep for exact names meanwhile")
            core = out.get("message") or ""
            if core and not core.startswith(EMPTY_INDEX):  # that one advises `probe index`: moot here
                note = f"{note}; {core}"
            out["message"] = note
        return out

    def _pending_changes(self) -> int:
        """Changes seen and not indexed yet: the watcher's queue, requested and running scans (the
        periodic safety rescan and the startup scan only look for changes: they are none)."""
        watcher = self._watcher
        queued = watcher.status().get("pending_changes", 0) if watcher is not None else 0
        return queued + self._sched.pending()

    @contextmanager
    def _repairing(self):
        """Damaged index files met by any verb (search, open_file, the intel tools, index_status):
        the worker's next scan sees the recorded damage and rebuilds; the answer says so."""
        try:
            yield
        except IndexDamaged as exc:
            self.request_scan(full=True, reason="repair")
            raise IndexDamaged(f"{exc}; {REPAIR_PENDING}") from exc

    def open_file(self, path: str, start_line: int | None = None, end_line: int | None = None) -> dict:
        from .answers import open_file_answer

        out = open_file_answer(self.root, path, start_line, end_line, ws=self._ws)
        if out["index_state"] == "damaged":  # the lines are still the answer
            self.request_scan(full=True, reason="repair")
            out["message"] = "; ".join(filter(None, [out["message"], f"the index is damaged; {REPAIR_PENDING}"]))
        return out

    def intel(self, tool: str, args: dict) -> dict:
        """Code intelligence over the symbol graph (read on its own SQLite connection)."""
        from .answers import intel_answer

        ws = self._workspace()
        with self._searching(), self._repairing():  # like a search: background embedding yields meanwhile
            return intel_answer(ws, tool, args)

    def memory(self, action: str, args: dict) -> dict:
        """Memory rules (their own SQLite stores: no workspace or backend needed)."""
        from .answers import memory_answer

        return memory_answer(self.root, action, args)

    def index_paths(self, paths: list[str], timeout: float | None = None) -> dict:
        """Index these files now (lexical phase) and return when they are searchable; dense vectors
        follow in the background. Used by the ``store`` tool of a library."""
        return self._sched.scan_and_wait(set(paths), full=False, reason="index_paths",
                                         timeout=timeout or self.settings.ready_timeout_s * 2)

    def rescan(self, timeout: float | None = None) -> dict:
        """A full stat scan now, answered when it is done (``probe index`` while this
        process owns the index); dense vectors follow in the background."""
        return self._sched.scan_and_wait(set(), full=True, reason="probe index", timeout=timeout or 110.0)

    def idle_seconds(self) -> float:
        """How long this engine has had nothing to do: no indexing, no search running, no RPC request.
        0 while it works. The daemon exits when this passes its idle timeout. Indexing that keeps
        failing (a backend down, an index built with another model) is not work: a daemon nobody
        asks must not retry forever."""
        with self._state:
            if (self._sched.in_progress() and not self._last_error) or self._sched.searches:
                return 0.0
            return time.monotonic() - self._last_activity

    def index_status(self) -> dict:
        with self._state:  # one snapshot: the error and the exception that caused it belong together
            ws, ok, err, exc = self._ws, self._backend_ok, self._last_error, self._last_exc
        out: dict = {"root": str(self.root)}
        if ws is not None:  # imported only then: while the worker still loads the store and the model
            from ..indexing.status import index_status  # (its imports), the status says so at once

            out = index_status(ws, probe_backend=bool(ok))
        with self._state:
            sched = self._sched
            out.update({
                "role": self.role,
                "pid": os.getpid(),
                "owner_pid": os.getpid(),
                "owner_kind": self.kind,
                "indexing_in_progress": sched.in_progress(),
                "first_scan_done": sched.first_scan_done.is_set(),
                "progress": sched.progress_dict(),
                "scans_completed": sched.scans_completed,
                "last_scan": sched.last_report,
                "uptime_s": round(time.time() - self._started_at, 1),
                "capabilities": dict(CAPABILITIES, watch=self.settings.watch),
                "debounce_s": self.settings.debounce_s,
            })
            if ok is False:
                out["backend_reachable"] = False
            elif ok is None and out.get("backend_reachable") is None:
                out["backend_reachable"] = None
            if err:
                out["last_error"] = err
            if isinstance(exc, IndexConfigMismatch):
                out["index_config_mismatch"] = True
        if out.get("index_damaged") and ws is not None:
            self.request_scan(full=True, reason="repair")
            out["last_error"] = f"{out.get('last_error')}; {REPAIR_PENDING}"
        out["index_update_pending"] = self._sched.first_scan_done.is_set() and self._pending_changes() > 0
        watcher = self._watcher
        if watcher is not None:
            out.update(watcher.status())
        else:
            out.update({"watcher_running": False, "watcher_restarts": 0,
                        "watcher_error": None if self.settings.watch else "disabled (PROBE_WATCH=0)",
                        "pending_changes": 0})
        return out

    def ping(self) -> dict:
        return {"pid": os.getpid(), "root": str(self.root), "kind": self.kind}

    def shutdown(self) -> dict:
        """``probe stop``: a daemon finishes the batch in hand and exits (the queue survives in the
        manifest). A ``probe mcp`` belongs to its editor and refuses."""
        if self.kind != "daemon":
            raise ProbeError(f"this workspace is owned by probe mcp (pid {os.getpid()}), run by an editor; "
                             "it stops when the editor closes it")
        self.shutdown_requested.set()
        return {"pid": os.getpid(), "stopping": True}

    def dispatch(self, method: str, params: dict) -> object:
        """The RPC entry point: attached processes call the same methods as the faces, those of the
        ``Engine`` protocol and no others (``surface.py``)."""
        from .surface import serve

        with self._state:
            self._last_activity = time.monotonic()
        return serve(self, method, params)
