"""The background owner: an ``OwnerEngine`` in a detached process, without MCP.

``probe index --background`` starts it to fill dense vectors after the lexical phase, and a CLI call
that had to answer by itself (no owner running) starts it so that the next calls are warm. It is the
same engine a ``probe mcp`` runs — it indexes, watches the files and serves the Unix-socket RPC —
so every face talks to it the same way, and the ``flock`` election stays the only ownership rule:

* it takes ``.probe/engine.lock`` itself, before it opens anything. The process that starts it
  never hands a lock over: it is not holding one (or releases it before spawning), so there is no
  moment where two processes write. If another owner wins the race the daemon exits at once;
* it exits after ``PROBE_DAEMON_IDLE_S`` (600 s) with nothing to do — no indexing, no request —
  on ``probe stop`` (RPC ``shutdown``), on SIGTERM/SIGINT/SIGHUP, and when its root is moved or
  deleted (``root_check.py``); a ``probe mcp`` attached to
  it takes the index over when it goes, as it would from another ``probe mcp``;
* it runs in its own session (no controlling terminal), with stdin from ``/dev/null`` and stdout
  and stderr appended to ``.probe/logs/probe-daemon.log``: no pipe of the caller stays open, so
  ``probe index --background | cat`` ends when the CLI does.

Run it as ``python -m probe_core.engine.daemon ROOT`` (``spawn_daemon`` does).
"""
from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from .. import environment
from ..errors import BackendUnavailable, ProbeError
from ..private_dir import ensure_private_dir
from ..redaction import RedactingFilter
from .client import AttachedEngine
from .lock import LOCK_FILE, EngineLock, read_owner_info
from .malloc_arenas import limit_malloc_arenas
from .rpc import OwnerUnavailable

log = logging.getLogger("probe.daemon")

DAEMON_LOG = "probe-daemon.log"
LOG_ROTATE_BYTES = 2_000_000
PING_TIMEOUT_S = 5.0


def auto_start_enabled(env: dict | None = None) -> bool:
    """Whether the CLI may start the background owner (``PROBE_DAEMON``, default on): after a call it
    answered by itself, and for ``probe index --background``. Off, the CLI never starts one; an owner
    that already runs (a ``probe mcp``, a daemon started earlier, a blocking ``probe index``) still
    answers every call, since only one process may open a workspace's index."""
    env = environment.environ() if env is None else env
    return env.get("PROBE_DAEMON", "1").strip().lower() not in ("0", "false", "no", "off")


def log_path(probe_dir: Path) -> Path:
    return Path(probe_dir) / "logs" / DAEMON_LOG


def owner_ping(root: Path | str, probe_dir: Path | None = None) -> dict | None:
    """``{pid, root, kind}`` of the process that owns the workspace and answers, else None."""
    try:
        return AttachedEngine(root, rpc_timeout_s=PING_TIMEOUT_S, probe_dir=probe_dir).ping()
    except (OwnerUnavailable, BackendUnavailable):
        return None


def spawn_daemon(root: Path | str) -> subprocess.Popen:
    """Start the background owner of ``root`` (detached; returns at once). The caller must not hold
    the workspace's lock, or must release it soon: the daemon waits for it (``PROBE_ATTACH_TIMEOUT_S``)."""
    root = Path(os.path.realpath(root))
    path = log_path(root / ".probe")
    ensure_private_dir(root / ".probe")  # .probe/ first: the logs dir's parents must not be made 0755
    ensure_private_dir(path.parent)
    try:
        if path.stat().st_size > LOG_ROTATE_BYTES:
            os.replace(path, path.with_name(DAEMON_LOG + ".1"))
    except FileNotFoundError:
        pass
    # O_NOFOLLOW: a log planted as a link must not make the daemon append elsewhere
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600),
                   "ab") as out:
        # -P: the working directory (the user's repository, which may hold a `types.py`) must not
        # shadow the standard library on sys.path
        return subprocess.Popen([sys.executable, "-P", "-m", "probe_core.engine.daemon", str(root)],
                                stdin=subprocess.DEVNULL, stdout=out, stderr=out, cwd=str(root),
                                start_new_session=True, close_fds=True)


def wait_until_serving(root: Path | str, proc: subprocess.Popen, timeout: float) -> dict:
    """Block until an owner of ``root`` answers (normally ``proc``; another one if it won the race).
    Raises ``BackendUnavailable`` when ``proc`` exits first or nothing answers in ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        info = owner_ping(root)
        if info is not None:
            return info
        if proc.poll() is not None:
            raise BackendUnavailable(f"the background indexer exited at start (code {proc.returncode}); "
                                     f"see {log_path(Path(root) / '.probe')}")
        if time.monotonic() >= deadline:
            raise BackendUnavailable(f"the background indexer (pid {proc.pid}) did not start serving within "
                                     f"{timeout:.0f} s; see {log_path(Path(root) / '.probe')}")
        time.sleep(0.05)


def _lock_holder(probe_dir: Path) -> int | None:
    try:
        return int((probe_dir / LOCK_FILE).read_text("utf-8").strip())
    except (OSError, ValueError):
        return None


def _exited(pid: int) -> bool:
    """``pid`` is gone, or a zombie its parent has not reaped yet (it holds no lock any more)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # another user's process took the pid over
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2:].startswith("Z")


def stop_daemon(root: Path | str, timeout: float = 30.0) -> int | None:
    """End the background owner of ``root``; returns its pid, or None when none runs.

    Asks over RPC (it finishes the batch in hand, flushes and exits); a daemon that does not answer
    gets SIGTERM, if the lock file still names it. A ``probe mcp`` or ``probe index`` owner refuses (``ProbeError``).
    """
    root = Path(os.path.realpath(root))
    probe_dir = root / ".probe"
    lock = EngineLock(probe_dir)
    if lock.is_free():
        return None
    info = read_owner_info(probe_dir)
    pid = info.get("pid")
    try:
        pid = AttachedEngine(root, rpc_timeout_s=PING_TIMEOUT_S).shutdown()["pid"]
    except (OwnerUnavailable, BackendUnavailable):
        if info.get("kind") != "daemon" or not isinstance(pid, int) or _lock_holder(probe_dir) != pid:
            raise BackendUnavailable(f"the process holding {lock.path} is not a Probe daemon that answers; "
                                     "nothing was stopped") from None
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    # Done when the lock is free or held by someone else: a `probe mcp` attached to the daemon takes
    # it over the moment the daemon exits, so a free lock may never be seen. (A process that shows as
    # exited may still hold it for a moment: its threads close its files last.)
    while not (lock.is_free() or (isinstance(pid, int) and _exited(pid) and _lock_holder(probe_dir) != pid)):
        if time.monotonic() >= deadline:
            raise BackendUnavailable(f"the Probe daemon (pid {pid}) did not stop within {timeout:.0f} s; "
                                     f"`kill {pid}` ends it (the index survives any stop)")
        time.sleep(0.05)
    return pid


def run_daemon(root: Path) -> int:
    """The daemon process: own ``root``'s index until idle, stopped, or signalled."""
    from .service import OwnerEngine
    from .settings import EngineSettings

    logging.basicConfig(level=environment.get("PROBE_LOG", "INFO").upper(), stream=sys.stderr,
                        format="%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s")
    for handler in logging.getLogger().handlers:  # API keys never reach the log (docs/reliability.md)
        handler.addFilter(RedactingFilter())
    root = Path(os.path.realpath(root))
    settings = EngineSettings.from_env()
    lock = EngineLock(root / ".probe")
    deadline = time.monotonic() + settings.attach_timeout_s
    # The CLI that started us may still hold the lock for a moment (it answered a search by itself).
    while not lock.try_acquire():
        other = owner_ping(root)
        if other is not None:
            log.info("pid %s already owns %s; nothing to do", other.get("pid"), root)
            return 0
        if time.monotonic() >= deadline:
            log.warning("the lock of %s stayed busy for %.0f s; giving up", root, settings.attach_timeout_s)
            return 1
        time.sleep(0.1)
    limit_malloc_arenas()  # before the engine's threads start (``malloc_arenas.py``)
    engine = OwnerEngine(root, settings, kind="daemon")

    def _stop(signum, _frame):
        log.info("signal %d: stopping", signum)
        engine.shutdown_requested.set()

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, _stop)
    engine.start()
    log.info("probe daemon owns %s (pid %d); exits after %.0f s idle", root, os.getpid(), settings.daemon_idle_s)
    tick = min(1.0, settings.daemon_idle_s / 4)
    while not engine.shutdown_requested.wait(tick):
        idle = engine.idle_seconds()
        if idle >= settings.daemon_idle_s:
            log.info("idle for %.0f s: exiting", idle)
            break
    engine.close()
    # The lock goes with the process (the kernel drops it at exit): released any earlier, a busy
    # worker that close() had to leave behind could still write while the next owner opens the store.
    logging.shutdown()
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: python -m probe_core.engine.daemon ROOT", file=sys.stderr)
        sys.exit(2)
    try:
        sys.exit(run_daemon(Path(sys.argv[1])))
    except ProbeError as exc:
        log.error("%s", exc)
        sys.exit(1)
