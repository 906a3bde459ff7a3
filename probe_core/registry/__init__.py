"""The workspace registry, and ``probe prune``: which workspaces exist, when each was last used, and
deleting the indexes of those nobody has used for a while.

* :mod:`probe_core.memory.workspaces` — :class:`WorkspaceRecord` and the user-level SQLite
  :class:`Registry` (``workspaces.sqlite``);
* :mod:`probe_core.memory.workspaces_server` — the copy in a Qdrant server's ``probe_workspaces``
  collection;
* :mod:`probe_core.memory.seen` — :func:`record_workspace` and the never-raising :func:`note_seen`;
* :mod:`.listing` — every known workspace, local and server records merged;
* :mod:`.durations` — ``30d`` ↔ seconds;
* :mod:`.pruning` — stale selection, :func:`prune` and its report.

The first three live a layer down, in ``memory``, since the owner engine writes the records (when
it opens, after scans, and by its heartbeat) and may not import a layer above it; this package is
what reads them. ``prune`` reads both the local registry and the servers' copies and keeps the
newest ``last_seen_at`` of each workspace. Imports stay light (stdlib only); ``qdrant-client`` loads only
when a server is involved.
"""
from __future__ import annotations

from .durations import format_age, format_duration, parse_duration
from .listing import ConnectFn, list_workspaces
from .pruning import (
    SERVER_MIN_AGE_S,
    PruneEntry,
    PruneReport,
    format_bytes,
    prune,
    render_prune,
    stale_workspaces,
)
from ..memory.seen import RECORD_INTERVAL_S, note_seen, record_workspace
from ..memory.workspaces import (
    DB_NAME,
    Registry,
    RegistryError,
    WorkspaceRecord,
    iso,
    record_for,
    registry_summary,
    this_host,
)
from ..memory.workspaces_server import SERVER_COLLECTION, server_records, server_remove, server_upsert

__all__ = [
    "PruneEntry", "PruneReport", "Registry", "RegistryError", "WorkspaceRecord", "list_workspaces", "note_seen",
    "parse_duration", "prune", "record_workspace", "render_prune", "stale_workspaces",
]
