"""Project identity in the index: re-keying a workspace's points when its ``project_id`` changes.

The identity rules themselves (remote normalization, clone disambiguation, the ``projects.json``
registry) are ``probe_core.project_identity``'s, below ``workspace``, which asks them for a root's
id; they are named here too, where they lived first.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..project_identity import (  # noqa: F401 - named here too
    ProjectRegistry,
    identity_key,
    normalize_remote,
    project_id,
    read_git_remote,
    resolve_project_id,
)

if TYPE_CHECKING:
    from ..workspace import Workspace


# -- re-keying ---------------------------------------------------------------------------------
def rekey_project(ws: "Workspace", new_project_id: str) -> None:
    """Set ``project_id`` on every point of ``ws`` in place (no re-embedding) and record it."""
    from ..storage.protocol import StoreFilter

    with ws.write_lock:
        ws.store.set_payload(StoreFilter(workspace_id=ws.workspace_id), {"project_id": new_project_id})
        ws.store.flush()
        ws.manifest.set_meta("project_id", new_project_id)
        ws.__dict__["project_id"] = new_project_id
        ws.touch()


def sync_project_id(ws: "Workspace") -> bool:
    """Re-key the workspace when its computed id differs from the one its points carry.

    Call with the store open (collection ensured). Returns True when points were re-keyed.
    """
    from ..storage.protocol import StoreFilter

    current = ws.project_id
    stored = ws.manifest.get_meta("project_id")
    if stored == current:
        return False
    if ws.store.count(StoreFilter(workspace_id=ws.workspace_id)) == 0:  # nothing to update
        ws.manifest.set_meta("project_id", current)
        return False
    rekey_project(ws, current)
    return True
