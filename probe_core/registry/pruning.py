"""``probe prune``: deleting the indexes of workspaces nobody has used for a while.

Prune (:func:`prune`) of a workspace not seen for longer than the threshold:

* in use (its ``.probe/engine.lock`` is held by a running process) → skipped;
* its root is on this machine and ``.probe/config.json`` still names it → the workspace's
  ``.probe/store/`` and ``manifest.sqlite*`` go (and its points on the Qdrant server, for a server
  workspace), under the engine lock, so the next use re-indexes from scratch. ``config.json`` (the
  workspace keeps its id), memory rules and logs stay; nothing outside ``.probe/`` is touched.
  The manifest is emptied and marked dirty first, so a stop midway is repaired by the next index
  run (see :func:`_prune_one`);
* its root is gone (or now holds another workspace) → the record is dropped; a server workspace's
  points are deleted too, since nothing can use them any more;
* a server workspace recorded by another host → its points and records are deleted (it was not
  seen by any machine for the whole threshold).

Prune never touches a workspace last seen within the threshold. On this machine a live workspace is
also protected by its engine lock; on another machine sharing a Qdrant server, only by its
``last_seen_at``, which a running owner refreshes every ``RECORD_INTERVAL_S`` (5 min, the engine's
heartbeat). So a server workspace counts as stale only when unseen for more than
``SERVER_MIN_AGE_S`` (10 min) as well, whatever ``--older-than`` says (a warning tells).
"""
from __future__ import annotations

import logging
import os
import shutil
import sqlite3
import time
from contextlib import closing
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import quote

from ..config import PROBE_DIR, load_config
from ..errors import ProbeError
from .durations import format_age, format_duration
from .listing import ConnectFn, _merged, _Servers, list_workspaces
from ..memory.seen import RECORD_INTERVAL_S
from ..memory.workspaces import Registry, RegistryError, WorkspaceRecord, this_host
from ..memory.workspaces_server import server_remove

log = logging.getLogger("probe.registry")

SERVER_MIN_AGE_S = 2 * RECORD_INTERVAL_S  # a server workspace seen more recently may have a live owner elsewhere


def format_bytes(n: int | None) -> str:
    if n is None:
        return "-"
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def stale_workspaces(older_than_s: float, now: float | None = None,
                     records: list[WorkspaceRecord] | None = None, **kwargs) -> list[WorkspaceRecord]:
    """Workspaces last seen more than ``older_than_s`` seconds before ``now``, oldest first; one on a
    Qdrant server also more than ``SERVER_MIN_AGE_S`` before (its owner's heartbeat may be due)."""
    now = time.time() if now is None else now
    records = list_workspaces(**kwargs) if records is None else records
    return [r for r in records
            if now - r.last_seen_at > (max(older_than_s, SERVER_MIN_AGE_S) if r.backend == "qdrant" else older_than_s)]


@dataclass
class PruneEntry:
    record: WorkspaceRecord
    age_s: float
    action: str  # "delete" (index files and/or points), "drop" (the record only), "skip"
    reason: str
    applied: bool = False  # False in a dry run, or when skipped
    points: int | None = None
    bytes: int | None = None
    deleted_paths: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        d = self.record.to_dict()
        d.update(age_s=round(self.age_s, 1), age=format_age(self.age_s), action=self.action, reason=self.reason,
                 applied=self.applied, points=self.points, bytes=self.bytes, deleted_paths=self.deleted_paths)
        return d


@dataclass
class PruneReport:
    older_than_s: float
    dry_run: bool
    now: float
    known: int
    entries: list[PruneEntry]
    warnings: list[str] = field(default_factory=list)

    def to_list(self) -> list[dict]:
        return [e.to_dict() for e in self.entries]


STORE_ASIDE = "store.pruning"  # the store, renamed aside by prune before its deletion


def _index_files(probe_dir: Path) -> list[Path]:
    """What prune deletes under ``.probe/``, in the order it deletes them: the embedded store (and
    what an interrupted prune left renamed aside), then the manifest's -wal/-shm, ``manifest.sqlite``
    last (see :func:`_prune_one` for why this order)."""
    out = [probe_dir / STORE_ASIDE, probe_dir / "store"]
    out += sorted(probe_dir.glob("manifest.sqlite*"), key=lambda p: (p.name == "manifest.sqlite", p.name))
    return [p for p in out if p.exists() or p.is_symlink()]


def _empty_manifest(probe_dir: Path) -> None:
    """Empty the manifest and mark it dirty, in one transaction; then checkpoint its WAL into
    ``manifest.sqlite``.

    An empty manifest with ``index_dirty = 1`` is a valid index state whatever the store holds: the
    next index run reconciles (every point the manifest does not list is an orphan and is deleted)
    and then indexes every file afresh. The checkpoint leaves nothing in the WAL, so deleting
    -wal/-shm afterwards loses nothing. The caller holds the engine lock: no other connection has
    the manifest open."""
    db = probe_dir / "manifest.sqlite"
    if not db.exists():
        return
    try:
        with closing(sqlite3.connect(db, timeout=10, isolation_level=None)) as conn:
            tables = [r[0] for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")]
            if "meta" not in tables:
                return  # no index state in it: nothing to protect
            conn.execute("BEGIN IMMEDIATE")
            try:
                for table in tables:  # files, chunks, branch_files, pending_dense (as Manifest.clear)
                    if table != "meta":
                        conn.execute(f'DELETE FROM "{table}"')
                conn.execute("DELETE FROM meta WHERE key NOT IN ('schema_version')")
                conn.execute("INSERT INTO meta(key, value) VALUES('index_dirty', '1')")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            if busy and busy[0]:
                raise RegistryError(f"{db} is busy; not pruned")
    except sqlite3.OperationalError as exc:  # locked, read-only, ...: leave the workspace alone
        raise RegistryError(f"cannot empty {db}: {exc}") from exc
    except sqlite3.DatabaseError as exc:  # not a database / corrupt: nothing can trust it anyway
        log.warning("manifest %s is unreadable (%s); deleting it with the store", db, exc)


def _disk_usage(st: os.stat_result) -> int:
    # allocated blocks, not the apparent size: Qdrant Edge preallocates a sparse ~100 MB WAL
    blocks = getattr(st, "st_blocks", None)
    return blocks * 512 if blocks is not None else st.st_size


def _size(paths: list[Path]) -> int:
    """Bytes on disk under ``paths`` (what deleting them frees)."""
    total = 0
    for p in paths:
        if p.is_symlink() or p.is_file():
            total += _disk_usage(p.lstat())
        elif p.is_dir():
            for dirpath, _dirs, files in os.walk(p):
                for name in files:
                    try:
                        total += _disk_usage(os.lstat(os.path.join(dirpath, name)))
                    except OSError:
                        pass
    return total


def _manifest_chunks(probe_dir: Path) -> int | None:
    db = probe_dir / "manifest.sqlite"
    if not db.exists():
        return None
    # no WAL file: open immutable, which creates no -wal/-shm files (a dry run changes nothing)
    flags = "mode=ro" if Path(f"{db}-wal").exists() else "mode=ro&immutable=1"
    try:
        with closing(sqlite3.connect(f"file:{quote(str(db))}?{flags}", uri=True, timeout=2)) as conn:
            return int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
    except sqlite3.Error:
        return None


def _remove(path: Path, probe_dir: Path) -> None:
    """Delete ``path`` — only ever a direct child of ``probe_dir``; a symlink is unlinked, not followed."""
    if path.parent != probe_dir:
        raise RegistryError(f"refusing to delete {path}: not directly inside {probe_dir}")
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def _lock_holder(probe_dir: Path) -> str:
    try:
        pid = (probe_dir / "engine.lock").read_text("utf-8").strip()
    except OSError:
        pid = ""
    return f"in use (pid {pid})" if pid else "in use"


def _server_points(servers: _Servers, rec: WorkspaceRecord) -> tuple[object | None, int | None, str | None]:
    """(client, points of the workspace in its collection, error)."""
    client = servers.get(rec.url or "")
    if client is None:
        return None, None, f"Qdrant at {rec.url} is unreachable: {servers.errors.get(rec.url or '')}"
    try:
        from qdrant_client import models as m

        if not rec.collection or not client.collection_exists(rec.collection):
            return client, 0, None
        flt = m.Filter(must=[m.FieldCondition(key="workspace_id", match=m.MatchValue(value=rec.workspace_id))])
        return client, client.count(rec.collection, count_filter=flt, exact=True).count, None
    except Exception as exc:  # noqa: BLE001
        return None, None, f"Qdrant at {rec.url}: {servers.fail(rec.url or '', exc)}"


def _delete_server_points(client, rec: WorkspaceRecord) -> None:
    from ..storage.qdrant_server import QdrantServerStore

    if rec.collection:  # its own collection, or a shared one it was last in, goes with its points
        QdrantServerStore(client, rec.collection, where=rec.url or "qdrant").remove_workspace(rec.workspace_id)


def _drop_record(registry: Registry, servers: _Servers, rec: WorkspaceRecord) -> None:
    registry.remove(rec.workspace_id)
    if rec.backend == "qdrant" and rec.url:
        client = servers.get(rec.url)
        if client is not None:
            server_remove(client, rec.workspace_id)


def _still_owned(rec: WorkspaceRecord, root: Path, here: bool) -> tuple[bool, str]:
    """Is the workspace still at its root on this machine? (owned, and why not when it is not)."""
    if here and root.is_dir():
        try:
            cfg = load_config(root)
        except ProbeError:
            cfg = None
        if cfg is not None and cfg.workspace_id == rec.workspace_id:
            return True, ""
        return False, ("root has no Probe config any more" if cfg is None
                       else f"root now holds workspace {cfg.workspace_id}")
    if here:
        return False, "root no longer exists"
    return False, f"seen last on host {rec.host}"


def _remove_index_files(probe_dir: Path, files: list[Path]):
    """Delete the index files, yielding each path once it is gone; the embedded store is renamed
    aside first (one atomic step, so no half-deleted shard is ever opened)."""
    for p in files:
        if p.name == "store" and p.is_dir() and not p.is_symlink():
            aside = probe_dir / STORE_ASIDE
            p.rename(aside)
            _remove(aside, probe_dir)
        else:
            _remove(p, probe_dir)
        yield str(p)


def _prune_one(rec: WorkspaceRecord, age: float, *, dry_run: bool, registry: Registry,
               servers: _Servers) -> PruneEntry:
    from ..engine.lock import EngineLock

    entry = PruneEntry(rec, age, "drop", "")
    server = rec.backend == "qdrant"
    root = Path(rec.root)
    here = rec.host in ("", this_host())
    probe_dir = root / PROBE_DIR

    owned, entry.reason = _still_owned(rec, root, here)
    if not here and not server:
        return PruneEntry(rec, age, "skip", f"embedded workspace on another host ({rec.host})")

    client = None
    if server:
        client, entry.points, err = _server_points(servers, rec)
        if err:
            entry.action, entry.reason = "skip", err
            return entry
        if entry.points:
            entry.action = "delete"
            entry.reason = ", ".join(x for x in (entry.reason, f"{entry.points} points on {rec.url}") if x)

    if not owned:
        if dry_run:
            return entry
        if server and entry.points:
            _delete_server_points(client, rec)
        _drop_record(registry, servers, rec)
        entry.applied = True
        return entry

    lock = EngineLock(probe_dir)
    if dry_run:
        if not lock.is_free():
            return PruneEntry(rec, age, "skip", _lock_holder(probe_dir), points=entry.points)
    elif not lock.try_acquire():
        return PruneEntry(rec, age, "skip", _lock_holder(probe_dir), points=entry.points)
    try:
        if not server:
            entry.points = _manifest_chunks(probe_dir)
        files = _index_files(probe_dir)
        entry.action = "delete"
        entry.bytes = _size(files)
        entry.reason = f"not seen for {format_age(age)}"
        if server:
            entry.reason += f"; {entry.points or 0} points on {rec.url}"
        if dry_run:
            entry.deleted_paths = [str(p) for p in files]
            return entry
        # The order is safe at every step: a stop anywhere (crash, kill, full disk) leaves a state the
        # next `probe index` turns into a correct index.
        # 1. empty the manifest and mark it dirty, in one transaction, its WAL checkpointed into
        #    manifest.sqlite: whatever the store still holds, the next index run deletes it as
        #    orphans (reconcile) and indexes every file afresh;
        # 2. the points: a server workspace's, and the embedded store (renamed aside first, one atomic
        #    step, so no half-deleted shard is ever opened; a leftover is deleted by the next prune);
        # 3. the manifest: -wal/-shm first (empty after step 1), manifest.sqlite last.
        # Any other order has an unsafe stop: points deleted under a manifest that still lists them
        # with index_dirty=0 (0 files re-indexed, empty results), or a manifest deleted before the
        # points (a fresh manifest, never reconciled, under points nothing lists).
        _empty_manifest(probe_dir)
        if server and entry.points:
            _delete_server_points(client, rec)
        entry.deleted_paths.extend(_remove_index_files(probe_dir, files))
        _drop_record(registry, servers, rec)
        entry.applied = True
        return entry
    finally:
        lock.release()


def prune(older_than_s: float, *, dry_run: bool = False, now: float | None = None, registry: Registry | None = None,
          server_urls: list[str] | None = None, connect: ConnectFn | None = None) -> PruneReport:
    """Delete the indexes of workspaces not seen for more than ``older_than_s`` seconds (see the module
    docstring for what goes and what stays). ``dry_run`` reports the same and changes nothing.
    ``server_urls``: Qdrant servers to read ``probe_workspaces`` from besides ``$QDRANT_URL`` and
    those the local records name; ``connect``: url → client (tests)."""
    if older_than_s < 0:
        raise RegistryError("--older-than must not be negative")
    now = time.time() if now is None else now
    registry = registry or Registry()
    servers = _Servers(connect)
    warnings: list[str] = []
    try:
        records = _merged(registry, servers, server_urls, warnings)
        if older_than_s < SERVER_MIN_AGE_S and any(r.backend == "qdrant" for r in records):
            warnings.append(f"workspaces on a Qdrant server are pruned only when not seen for more than "
                            f"{format_duration(SERVER_MIN_AGE_S)}: a running owner re-records its workspace "
                            f"every {format_duration(RECORD_INTERVAL_S)}")
        entries: list[PruneEntry] = []
        for rec in stale_workspaces(older_than_s, now, records):
            age = now - rec.last_seen_at
            try:
                entries.append(_prune_one(rec, age, dry_run=dry_run, registry=registry, servers=servers))
            except Exception as exc:  # noqa: BLE001 - one workspace failing must not stop the others
                log.warning("pruning %s failed: %s", rec.root, exc)
                entries.append(PruneEntry(rec, age, "skip", f"failed: {type(exc).__name__}: {exc}"))
        return PruneReport(older_than_s, dry_run, now, len(records), entries, warnings)
    finally:
        servers.close()


def render_prune(report: PruneReport) -> str:
    """The readable table ``probe prune`` prints."""
    threshold = format_duration(report.older_than_s)
    lines = [f"{len(report.entries)} of {report.known} known workspace(s) not seen for more than {threshold}"
             + (" (dry run: nothing changed)" if report.dry_run else "")]
    for w in report.warnings:
        lines.append(f"warning: {w}")
    if not report.entries:
        return "\n".join(lines)
    verbs = {("delete", True): "would delete", ("drop", True): "would drop",
             ("delete", False): "deleted", ("drop", False): "dropped", ("skip", True): "skip",
             ("skip", False): "skipped"}
    rows = [("ACTION", "WORKSPACE", "LAST SEEN", "AGE", "POINTS", "SIZE", "ROOT", "REASON")]
    for e in report.entries:
        r = e.record
        rows.append((verbs[(e.action, report.dry_run)], r.workspace_id[:8],
                     datetime.fromtimestamp(r.last_seen_at, timezone.utc).strftime("%Y-%m-%d %H:%M"),
                     format_age(e.age_s), "-" if e.points is None else str(e.points), format_bytes(e.bytes),
                     r.root + (f" [{r.url}]" if r.backend == "qdrant" else ""), e.reason))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(row[:-1], widths)) + "  " + row[-1])
    return "\n".join(lines)
