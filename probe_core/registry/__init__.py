"""The workspace registry, and ``probe prune``: which workspaces exist, when each was last used, and
deleting the indexes of those nobody has used for a while.

* :mod:`.records` — :class:`WorkspaceRecord` and the user-level SQLite :class:`Registry`
  (``workspaces.sqlite``);
* :mod:`.server_copy` — the copy in a Qdrant server's ``probe_workspaces`` collection;
* :mod:`.recording` — :func:`record_workspace` and the never-raising :func:`note_seen`;
* :mod:`.listing` — every known workspace, local and server records merged;
* :mod:`.durations` — ``30d`` ↔ seconds;
* :mod:`.pruning` — stale selection, :func:`prune` and its report.

``prune`` reads both the local registry and the servers' copies and keeps the newest
``last_seen_at`` of each workspace. Imports stay light (stdlib only); ``qdrant-client`` loads only
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
from .recording import RECORD_INTERVAL_S, note_seen, record_workspace
from .records import (
    DB_NAME,
    Registry,
    RegistryError,
    WorkspaceRecord,
    iso,
    record_for,
    registry_summary,
    this_host,
)
from .server_copy import SERVER_COLLECTION, server_records, server_remove, server_upsert

__all__ = [
    "PruneEntry", "PruneReport", "Registry", "RegistryError", "WorkspaceRecord", "list_workspaces", "note_seen",
    "parse_duration", "prune", "record_workspace", "render_prune", "stale_workspaces",
]
