"""The CLI's side of a running owner: answer through it (the warm path), start the background owner
after a cold answer, and ``probe stop``.

Warm path: when a ``probe mcp`` or the background daemon owns the workspace, a CLI verb is one RPC
over the owner's Unix socket. This module imports only ``probe_core.engine.client`` (``json``,
``socket``) and ``probe_core.environment``: no model, no store, no tree-sitter, no settings code, so
the process costs Python's start plus a round trip. Anything unusual (no owner, an owner that just went away, ``probe index``
holding the lock) falls back to the full path, which knows every case.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from probe_core import environment

DEFAULT_RPC_TIMEOUT_S = 120.0
DEFAULT_PING_S = 3.0  # an owner that does not answer a ping this fast is stopped or stuck (PROBE_OWNER_PING_S)


def _rpc_timeout() -> float:
    # checked as EngineSettings checks it (importing that would cost the imports this path avoids)
    raw = environment.get("PROBE_RPC_TIMEOUT_S") or ""
    if not raw:
        return DEFAULT_RPC_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not value >= 0.1:
        from probe_core.errors import ConfigError

        raise ConfigError(f"PROBE_RPC_TIMEOUT_S={raw!r} must be a number of seconds, at least 0.1")
    return value


def call_owner(root: Path | str, method: str, *args, **kwargs):
    """``method`` answered by the process that owns ``root``'s index, or None when no owner answers
    (the caller then takes the full path). An owner's error answer raises its ``ProbeError``.
    An owner started with other backend settings than this shell's answers with its own: said on
    stderr, since nothing else would show it."""
    probe_dir = Path(root) / ".probe"
    if not (probe_dir / "engine.json").exists():  # no owner ever published itself here
        return None
    from probe_core.engine.client import AttachedEngine
    from probe_core.engine.lock import read_owner_info
    from probe_core.engine.rpc import OwnerUnavailable
    from probe_core.engine.settings_digest import differing

    timeout = _rpc_timeout()
    engine = AttachedEngine(root, rpc_timeout_s=timeout)
    try:
        _check_alive(root, probe_dir)
        answer = getattr(engine, method)(*args, **kwargs)
    except OwnerUnavailable:
        return None
    info = read_owner_info(probe_dir)
    if info.get("role") == "owner" and (names := differing(probe_dir, info.get("settings"))):
        restart = ("`probe stop` restarts it with yours at the next call" if info.get("kind") == "daemon"
                   else "restart your editor's Probe server to apply yours")
        print(f"probe: note: the running Probe {info.get('kind') or 'owner'} (pid {info.get('pid')}) started with "
              f"other settings than this shell's ({' or '.join(names)} differ) and answers with its own; {restart}",
              file=sys.stderr)
    return answer


def _ping_timeout() -> float:
    try:
        return max(0.1, float(environment.get("PROBE_OWNER_PING_S") or DEFAULT_PING_S))
    except ValueError:
        return DEFAULT_PING_S


def _check_alive(root: Path | str, probe_dir: Path) -> None:
    """A ping first (answered on the owner's RPC thread, whatever its worker is doing): an owner that
    is stopped (SIGSTOP) or stuck accepts the connection and never answers, and the real call would
    wait ``PROBE_RPC_TIMEOUT_S`` (120 s) in silence. Raises ``OwnerNotAnswering`` naming its pid."""
    from probe_core.engine.client import AttachedEngine
    from probe_core.engine.lock import owner_name, read_owner_info
    from probe_core.errors import BackendUnavailable, OwnerNotAnswering

    wait = _ping_timeout()
    try:
        AttachedEngine(root, rpc_timeout_s=wait).ping()
    except BackendUnavailable as exc:
        info = read_owner_info(probe_dir)
        name = owner_name(info["kind"]) if info.get("kind") else "Probe owner"
        raise OwnerNotAnswering(
            f"the {name} process (pid {info.get('pid', '?')}) that holds this index did "
            f"not answer within {wait:g} s (stopped or stuck); `kill -CONT {info.get('pid', 'PID')}` resumes a "
            f"stopped one, `kill {info.get('pid', 'PID')}` ends it and the next call answers by itself",
            pid=info.get("pid")) from exc


def status_without_owner(root: Path | str, exc) -> dict:
    """``probe status`` when the owner does not answer: what the manifest says, read-only (the
    owner keeps the store locked), with the reason in ``last_error``."""
    import sqlite3

    from probe_core.engine.lock import read_owner_info
    from probe_core.storage.damage import readonly_uri

    probe_dir = Path(root) / ".probe"
    out = {"root": str(root), "owner_pid": exc.pid, "owner_kind": read_owner_info(probe_dir).get("kind"),
           "owner_responding": False, "files_indexed": None,
           "chunks_indexed": None, "index_generation": None, "last_error": str(exc)}
    try:
        db = sqlite3.connect(readonly_uri(probe_dir / "manifest.sqlite"), uri=True, timeout=2)
        try:
            out["files_indexed"] = db.execute("SELECT COUNT(*) FROM files WHERE last_error IS NULL").fetchone()[0]
            out["chunks_indexed"] = db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
            row = db.execute("SELECT value FROM meta WHERE key='index_generation'").fetchone()
            out["index_generation"] = int(row[0]) if row else 0
        finally:
            db.close()
    except (sqlite3.Error, ValueError):
        pass  # the reason the owner gives no answer is the news; counts are a bonus
    return out


def start_after_cold_answer(root: Path | str) -> None:
    """After a verb answered in-process (it loaded the model and the store), start the background
    owner so that the next calls take the warm path. ``PROBE_DAEMON=0`` turns this off. Never fails
    the verb that already answered."""
    from probe_core.engine.daemon import auto_start_enabled, spawn_daemon
    from probe_core.engine.lock import EngineLock

    probe_dir = Path(root) / ".probe"
    if not auto_start_enabled() or not (probe_dir / "config.json").exists():
        return
    try:
        if not EngineLock(probe_dir).is_free():  # an owner or an indexer holds it: nothing to start
            return
        proc = spawn_daemon(root)
    except OSError as exc:
        print(f"probe: could not start the background owner: {exc}", file=sys.stderr)
        return
    if sys.stderr.isatty():
        print(f"probe: a background owner (pid {proc.pid}) keeps the index open so the next calls are fast; "
              "`probe stop` ends it, PROBE_DAEMON=0 stops this", file=sys.stderr)


def cmd_stop(args) -> int:
    """``probe stop``: end this workspace's background owner (the daemon)."""
    from probe_core.engine.daemon import stop_daemon

    root = Path(args.root or os.getcwd())
    pid = stop_daemon(root, timeout=args.timeout)
    if pid is None:
        print(f"no Probe daemon runs for {root}")
    else:
        print(f"stopped the Probe daemon (pid {pid}) of {root}")
    return 0


def register(subparsers) -> None:
    """Add ``probe stop`` to ``probe``'s subparsers."""
    import argparse

    sp = subparsers.add_parser("stop", help="stop this workspace's background owner (started by `probe index "
                                            "--background` or a CLI call)")
    sp.add_argument("--root", default=argparse.SUPPRESS, help="workspace root (default: current directory)")
    sp.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for it to exit")
    sp.set_defaults(func=cmd_stop)
