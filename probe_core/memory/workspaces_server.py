"""The copy of the registry on a Qdrant server: its ``probe_workspaces`` collection.

A workspace on a Qdrant server is upserted there as well as into the local ``workspaces.sqlite``
(payload-only points, id = workspace id, no vectors), so machines sharing one server see each
other's workspaces. ``qdrant-client`` loads only here, and only when a server is involved.
"""
from __future__ import annotations

import logging

from .workspaces import WorkspaceRecord

log = logging.getLogger("probe.registry")

SERVER_COLLECTION = "probe_workspaces"


def _server_call(client, lock, fn: str, *args, **kwargs):
    if lock is None:
        return getattr(client, fn)(*args, **kwargs)
    with lock:
        return getattr(client, fn)(*args, **kwargs)


def _ensure_server_collection(client, lock=None) -> None:
    if _server_call(client, lock, "collection_exists", SERVER_COLLECTION):
        return
    try:
        # payload-only: an empty named-vector map is the smallest vector config Qdrant accepts
        _server_call(client, lock, "create_collection", SERVER_COLLECTION, vectors_config={})
    except Exception:  # another machine created it meanwhile
        if not _server_call(client, lock, "collection_exists", SERVER_COLLECTION):
            raise


def server_upsert(client, rec: WorkspaceRecord, lock=None) -> None:
    from qdrant_client import models as m

    _ensure_server_collection(client, lock)
    old = _server_call(client, lock, "retrieve", SERVER_COLLECTION, [rec.workspace_id], with_payload=True)
    payload = rec.payload()
    if old and (old[0].payload or {}).get("first_seen_at"):
        payload["first_seen_at"] = old[0].payload["first_seen_at"]
    _server_call(client, lock, "upsert", SERVER_COLLECTION,
                 [m.PointStruct(id=rec.workspace_id, vector={}, payload=payload)], wait=True)


def server_records(client, lock=None) -> list[WorkspaceRecord]:
    if not _server_call(client, lock, "collection_exists", SERVER_COLLECTION):
        return []
    out: list[WorkspaceRecord] = []
    offset = None
    while True:
        pts, offset = _server_call(client, lock, "scroll", SERVER_COLLECTION, limit=256, offset=offset,
                                   with_payload=True, with_vectors=False)
        for p in pts:
            try:
                out.append(WorkspaceRecord.from_mapping({**(p.payload or {}), "workspace_id": str(p.id)}))
            except TypeError:  # a point that is not one of ours
                log.debug("ignoring malformed registry point %s", p.id)
        if offset is None:
            return out


def server_remove(client, workspace_id: str, lock=None) -> None:
    from qdrant_client import models as m

    if _server_call(client, lock, "collection_exists", SERVER_COLLECTION):
        _server_call(client, lock, "delete", SERVER_COLLECTION, m.PointIdsList(points=[workspace_id]), wait=True)
