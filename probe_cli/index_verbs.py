"""``probe index``: in this process, through the running owner, or handed to a background owner.

* ``probe index`` (or ``--wait``) blocks until the index is complete, dense vectors included: in
  this process when nobody owns the workspace, as its owner (``engine/foreground.py``: other
  processes' status, search and a ``probe mcp`` are served meanwhile); otherwise the owner (a
  ``probe mcp``, the daemon, another ``probe index``) rescans and this process follows its progress
  to the end. Scripts and the retrieval scorer rely on this.
* ``probe index --background`` returns as soon as the lexical phase is done (search answers from
  then on) and leaves the dense phase to the background owner (``probe_core.engine.daemon``),
  starting it when none runs. The daemon takes the lock itself; this process never holds it, so
  there is no handover and never two writers.
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

POLL_S = 0.25
ERROR_GRACE_S = 30.0  # an owner reporting an error this long (it retries meanwhile) ends a wait
RESCAN_TIMEOUT_S = 3600.0


def _root(args) -> Path:
    return Path(os.path.realpath(args.root or os.getcwd()))


def cmd_index(args) -> int:
    if args.background:
        return _index_background(args)
    return _index_blocking(args)


# -- blocking --------------------------------------------------------------------------------
def _index_blocking(args) -> int:
    """Index in this process as the workspace's owner (``ForegroundIndex``: it serves status, search
    and code intelligence to other processes meanwhile), or, when an owner runs, ask it to rescan and
    wait for it."""
    from probe_core import Workspace
    from probe_core.engine.lock import EngineLock
    from probe_core.engine.settings import EngineSettings
    from probe_core.errors import BackendUnavailable, IndexLocked

    ws = Workspace.open(_root(args))
    lock = EngineLock(ws.probe_dir)  # held while indexing: a `probe mcp` started meanwhile attaches
    wait_s = EngineSettings.from_env().attach_timeout_s
    deadline = time.monotonic() + wait_s
    here: list = []  # this process's own owner engine, once it runs
    try:
        while True:
            if lock.try_acquire():
                return _index_here(args, ws, here)
            if args.rebuild and _stop_daemon_owner(ws.root):
                continue  # our own background owner let go: rebuild here
            if args.rebuild:
                raise IndexLocked(_rebuild_refusal(ws.root))
            # a running owner (`probe mcp`, the daemon, another `probe index`) does the scan
            answered: list = []
            done = _index_via_owner(args, ws, answered)
            if done is not None:
                return done
            if answered:  # it served us, then exited (a `probe index` done): a fresh wait for the next owner
                deadline = time.monotonic() + wait_s
            # nobody answered: the owner exited since (the lock is free on the next try), is still
            # starting, or a short-lived CLI holds the lock (`probe search`): try again
            if time.monotonic() >= deadline:
                raise BackendUnavailable(f"another Probe process holds {lock.path} but does not answer; "
                                         "if it is stuck, stop it")
            time.sleep(0.1)
    finally:
        ws.close()  # the store is closed before the lock goes: the next owner can open it
        if not (here and here[0].busy()):  # a worker still writing keeps it until this process exits
            lock.release()


def _rebuild_refusal(root: Path) -> str:
    """Why ``--rebuild`` cannot start, naming who holds the index."""
    from probe_core.engine.daemon import owner_ping

    owner = owner_ping(root)
    if owner is not None and owner.get("kind") != "daemon":
        if owner.get("kind") == "index":
            return (f"--rebuild needs the index to itself: `probe index` (pid {owner.get('pid')}) is indexing "
                    "this workspace; run it when that one is done")
        return (f"--rebuild needs the index to itself: stop the running `probe mcp` (pid {owner.get('pid')}, "
                "your editor's Probe server) first")
    return ("--rebuild needs the index to itself: another Probe process holds it for a moment "
            "(a search or an index run); try again when it is done")


def _stop_daemon_owner(root: Path) -> bool:
    """Stop the daemon if it is what owns ``root`` (True); a ``probe mcp`` is left alone (False)."""
    from probe_core.engine.daemon import owner_ping, stop_daemon

    owner = owner_ping(root)
    if owner is None or owner.get("kind") != "daemon":
        return False
    stop_daemon(root)
    return True


def _index_here(args, ws, here: list) -> int:
    """Index ``ws``'s root in this process as its owner; the caller holds the engine lock (``here``
    gets the engine: its worker may still write after ``close``, e.g. on Ctrl-C mid-scan)."""
    from probe_core.engine.foreground import ForegroundIndex
    from probe_core.indexing.empty_reason import why_nothing_indexed
    from probe_core.indexing.indexer import rebuild

    from .render import IndexProgressView

    t0 = time.perf_counter()
    if args.rebuild:
        rebuild(ws)
    ws.close()  # the engine opens its own
    engine = ForegroundIndex(ws.root, dense=not args.lexical_only)
    here.append(engine)
    engine.start()
    try:
        with IndexProgressView(enabled=not args.json and not args.quiet) as view:
            report, _ = _follow_here(engine, view, lexical_only=args.lexical_only)
    finally:
        engine.close()
    report = {**report, "chunks_embedded": engine.embedded(), "seconds": round(time.perf_counter() - t0, 3)}
    if report.get("files_seen") == 0 and (why := why_nothing_indexed(ws.root)):
        print(f"probe: warning: {why}", file=sys.stderr)
    if args.json:
        print(json.dumps(report, indent=2))
    elif not args.quiet:
        from types import SimpleNamespace

        from .render import print_index_report

        print_index_report(SimpleNamespace(**report))
    return 0


def _follow_here(engine, view, *, lexical_only: bool):
    """Wait for this process's own owner to finish, feeding ``view``; its error ends the wait at once.
    Returns the lexical phase's report and the last progress."""
    report = None
    while True:
        if report is None:
            report = engine.first_scan(timeout=POLL_S)
        elif not lexical_only:
            time.sleep(POLL_S)
        if (failure := engine.failure()) is not None:
            raise failure
        progress = engine.progress()
        view.update(progress)
        if report is not None and (lexical_only or engine.complete()):
            return report, progress


def _index_via_owner(args, ws, answered: list) -> int | None:
    """``probe index`` while another process owns the workspace: it scans, this one waits for the
    dense vectors too (unless ``--lexical-only``). None when no owner answered (it may have exited
    since the lock was tried; ``answered`` gets an entry if it had answered before): the caller retries."""
    from probe_core.engine.client import AttachedEngine
    from probe_core.engine.rpc import OwnerUnavailable
    from probe_core.registry import note_seen

    from .render import IndexProgressView

    # AttachedEngine, not EngineHandle: the handle would take the lock over by itself and scan with
    # defaults (dense, no registry record, reported as if an owner had done it)
    engine = AttachedEngine(ws.root, rpc_timeout_s=RESCAN_TIMEOUT_S)
    try:
        before = engine.index_status()
        answered.append(before.get("owner_pid"))
        with IndexProgressView(enabled=not args.json and not args.quiet) as view:
            out = _rescan_following(engine, view)
            status = engine.index_status() if args.lexical_only else _follow(engine, view)
    except OwnerUnavailable:
        return None
    note_seen(ws)  # the workspace registry (`probe prune`), as the direct path does
    report = _owner_report(out, before, status)
    if args.json:
        print(json.dumps(report, indent=2))
    elif not args.quiet:
        _print_owner_report(report, status)
        if args.lexical_only:
            print("dense vectors follow in that process")
    return 0


def _owner_report(out: dict, before: dict, status: dict, **extra) -> dict:
    """The owner's index report in the shape `probe index` prints when it indexes by itself, its
    ``chunks_embedded`` counting what was embedded while this command waited, plus who did it."""
    embedded = max(0, (status.get("chunks_embedded") or 0) - (before.get("chunks_embedded") or 0))
    return {**out, "chunks_embedded": embedded, "owner_pid": status.get("owner_pid"),
            "owner_kind": status.get("owner_kind"), "dense_coverage": status.get("dense_coverage"), **extra}


def _print_owner_report(report: dict, status: dict) -> None:
    from types import SimpleNamespace

    from .render import print_index_report

    print_index_report(SimpleNamespace(**{**report, "errors": report.get("errors") or []}))
    print(f"(indexed by the running {_owner_name(status)}, pid {report['owner_pid']}; dense vectors "
          f"{status.get('chunks_embedded')}/{status.get('chunks_indexed')})")


def _owner_name(status: dict) -> str:
    from probe_core.engine.lock import owner_name

    return owner_name(status.get("owner_kind"))


# -- following an owner's progress ----------------------------------------------------------------
def _progress_of(status: dict):
    from probe_core.records import IndexProgress

    p = status.get("progress") or {}
    return IndexProgress(phase=p.get("phase", "idle"), files_scanned=p.get("files_scanned", 0),
                         files_total=p.get("files_total", 0), chunks_indexed=p.get("chunks_indexed", 0),
                         chunks_embedded=p.get("chunks_embedded", 0), chunks_total=p.get("chunks_total", 0))


class _StuckCheck:
    """Ends a wait on the owner with its error: at once for an index built with another model, or
    when any error stays ``ERROR_GRACE_S`` (the owner retries meanwhile, and may recover)."""

    def __init__(self):
        self._since: float | None = None

    def __call__(self, status: dict) -> None:
        from probe_core.errors import IndexConfigMismatch, ProbeError

        if status.get("index_config_mismatch"):
            raise IndexConfigMismatch(status.get("last_error") or "index configuration mismatch")
        if not status.get("last_error"):
            self._since = None
            return
        self._since = self._since or time.monotonic()
        if time.monotonic() - self._since >= ERROR_GRACE_S:
            raise ProbeError(f"indexing is stuck in pid {status.get('owner_pid')}: {status['last_error']}")


def _rescan_following(engine, view) -> dict:
    """The owner's full scan (returns when its lexical phase is done), its progress shown meanwhile."""
    box: dict = {}

    def scan():
        try:
            box["report"] = engine.rescan(timeout=RESCAN_TIMEOUT_S)
        except BaseException as exc:  # re-raised on the calling thread
            box["error"] = exc

    worker = threading.Thread(target=scan, name="probe-rescan", daemon=True)
    worker.start()
    stuck = _StuckCheck()
    while worker.is_alive():
        worker.join(POLL_S)
        if worker.is_alive():
            status = engine.index_status()
            view.update(_progress_of(status))
            stuck(status)  # the scan never starts while the owner cannot open the index
    if "error" in box:
        raise box["error"]
    return box["report"]


def _follow(engine, view) -> dict:
    """Poll the owner's status, feeding ``view``, until everything (dense vectors too) is done;
    returns the last status."""
    stuck = _StuckCheck()
    while True:
        status = engine.index_status()
        view.update(_progress_of(status))
        stuck(status)
        if not status.get("indexing_in_progress"):
            return status
        time.sleep(POLL_S)


# -- background --------------------------------------------------------------------------------
def _index_background(args) -> int:
    """Lexical phase now (through the owner, started here if none runs), dense phase left to it."""
    from probe_core.config import init_workspace
    from probe_core.engine.client import AttachedEngine
    from probe_core.engine.daemon import auto_start_enabled, owner_ping, spawn_daemon, wait_until_serving
    from probe_core.engine.rpc import OwnerUnavailable
    from probe_core.engine.settings import EngineSettings
    from probe_core.errors import BackendUnavailable, ConfigError

    from .render import IndexProgressView

    root = _root(args)
    init_workspace(root)  # a clear error for a missing folder or a broken config, before any process starts
    if not auto_start_enabled() and (args.rebuild or owner_ping(root) is None):  # (a rebuild stops the daemon)
        raise ConfigError("probe index --background leaves the dense phase to a background owner, and "
                          "PROBE_DAEMON=0 forbids starting one: run `probe index` (it blocks, and serves "
                          "status and search to other shells meanwhile)")
    if args.rebuild:
        _rebuild_first(root)
    settings = EngineSettings.from_env()
    owner = owner_ping(root)
    if owner is None:
        owner = wait_until_serving(root, spawn_daemon(root), timeout=settings.attach_timeout_s)
    engine = AttachedEngine(root, rpc_timeout_s=RESCAN_TIMEOUT_S)
    try:
        before = engine.index_status()
        with IndexProgressView(enabled=not args.json and not args.quiet) as view:
            out = _rescan_following(engine, view)
            status = engine.index_status()
            view.update(_progress_of(status))
    except OwnerUnavailable:
        raise BackendUnavailable(f"the Probe process indexing {root} (pid {owner.get('pid')}) exited; "
                                 f"see {root / '.probe' / 'logs'}") from None
    # the registry record (`probe prune`) is the owner's: it records its workspace when it opens it
    if args.json:
        print(json.dumps(_owner_report(out, before, status, background=True), indent=2))
    elif not args.quiet:
        from .render import print_failures

        left = (status.get("chunks_indexed") or 0) - (status.get("chunks_embedded") or 0)
        print(f"indexed {out['files_indexed']} files ({out['chunks_indexed']} chunks), {out['files_unchanged']} "
              f"unchanged, {out['files_deleted']} deleted: search works now (lexical).")
        print_failures(out.get("errors") or [])
        if left > 0:
            print(f"dense vectors: {status.get('chunks_embedded')}/{status.get('chunks_indexed')} chunks, filling in "
                  f"in the background ({_owner_name(status)}, pid {owner.get('pid')}); `probe index --wait` waits, "
                  "`probe status` shows progress, `probe stop` ends it.")
    return 0


def _rebuild_first(root: Path) -> None:
    """``--background --rebuild``: drop the index here, under the lock, before the daemon starts."""
    from probe_core import Workspace
    from probe_core.engine.lock import EngineLock
    from probe_core.errors import IndexLocked
    from probe_core.indexing.indexer import rebuild

    lock = EngineLock(root / ".probe")
    if not lock.try_acquire() and not (_stop_daemon_owner(root) and lock.try_acquire()):
        raise IndexLocked(_rebuild_refusal(root))
    try:
        ws = Workspace.open(root)
        try:
            rebuild(ws)
        finally:
            ws.close()
    finally:
        lock.release()


def register(subparsers) -> None:
    """Add ``probe index`` to ``probe``'s subparsers."""
    import argparse

    sp = subparsers.add_parser("index", help="index (incrementally); blocks until done unless --background")
    sp.add_argument("--root", default=argparse.SUPPRESS, help="workspace root (default: current directory)")
    mode = sp.add_mutually_exclusive_group()
    mode.add_argument("--wait", action="store_true",
                      help="block until dense vectors are complete too (the default), following a running owner")
    mode.add_argument("--background", action="store_true",
                      help="return once lexical search works; a background owner fills dense vectors")
    sp.add_argument("--rebuild", action="store_true", help="drop the index and re-embed everything")
    sp.add_argument("--lexical-only", action="store_true", help="stop after BM25; dense vectors stay queued")
    sp.add_argument("--json", action="store_true", help="print the index report as JSON")
    sp.add_argument("--quiet", "-q", action="store_true")
    sp.set_defaults(func=cmd_index)
