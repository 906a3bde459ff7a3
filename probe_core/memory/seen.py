"""Recording a workspace as seen now, in the local registry and (for a server workspace) on its server.

Here, below the engine, because the owner engine records its workspace; ``registry`` (``probe
prune``, the listing) reads the records.

Updated when an owner engine opens its backends (``probe mcp`` start), after completed scans (at
most every few minutes), by the owner engine's heartbeat (at most every ``RECORD_INTERVAL_S`` while
it runs, idle or not) and by ``probe index``. Recording never breaks the engine (see
:func:`note_seen`).
"""
from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING

from .workspaces import Registry, WorkspaceRecord, record_for
from .workspaces_server import server_upsert

if TYPE_CHECKING:
    from ..workspace import Workspace

log = logging.getLogger("probe.registry")

# after scans, re-record at most this often per workspace and process; also the owner engine's
# heartbeat (EngineSettings.record_interval_s, never longer), which prune's SERVER_MIN_AGE_S relies on
RECORD_INTERVAL_S = 300.0

_recorded: dict[str, float] = {}
_recorded_lock = threading.Lock()


def record_workspace(ws: "Workspace", *, now: float | None = None, registry: Registry | None = None) -> WorkspaceRecord:
    """Record ``ws`` as seen now: the local registry, and the server's ``probe_workspaces`` when the
    workspace lives on a Qdrant server (through the workspace's own client). Raises on failure."""
    rec = record_for(ws, now)
    (registry or Registry()).upsert(rec)
    if rec.backend == "qdrant":
        store = ws.store
        client = getattr(store, "client", None)
        if client is not None:
            server_upsert(client, rec, lock=getattr(store, "_lock", None))
    with _recorded_lock:
        _recorded[rec.workspace_id] = time.monotonic()
    return rec


def note_seen(ws: "Workspace", *, min_interval_s: float = 0.0) -> bool:
    """:func:`record_workspace` that never raises (a failure is logged) and, with ``min_interval_s``,
    skips a workspace this process recorded less than that long ago. True when recorded."""
    try:
        if min_interval_s > 0:
            with _recorded_lock:
                last = _recorded.get(ws.workspace_id)
            if last is not None and time.monotonic() - last < min_interval_s:
                return False
        record_workspace(ws)
        return True
    except Exception as exc:  # noqa: BLE001 - the registry must never break the engine
        log.warning("could not record workspace %s in the registry: %s", getattr(ws, "root", "?"), exc)
        return False
