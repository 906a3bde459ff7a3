"""Do the manifest and the vector store agree? Checked before every index run, by status, and by a
search answer that comes back short.

The manifest says which files are indexed; the store holds their points. If the store is lost
behind Probe's back (``.probe/store/`` deleted, a Qdrant collection dropped), the manifest still
lists every file as indexed: an incremental run would skip them all and search would find nothing
while reporting itself healthy. Counting both sides is cheap (one SQL count, one exact store count
on the keyword-indexed ``workspace_id``), so the indexer checks before every run and repairs what
is missing, and ``status`` and ``search`` say what to run until it has.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..redaction import public_url
from ..storage.protocol import StoreFilter

if TYPE_CHECKING:
    from ..workspace import Workspace


@dataclass(frozen=True, slots=True)
class StoreCheck:
    """The manifest's point count against the store's, for one workspace."""

    manifest_points: int
    store_points: int
    in_progress: bool  # an index run is writing (or was interrupted): the counts may differ meanwhile
    store: str  # where the points live, for the message

    @property
    def missing(self) -> int:
        return max(0, self.manifest_points - self.store_points)

    @property
    def consistent(self) -> bool:
        return self.in_progress or self.store_points >= self.manifest_points

    def message(self) -> str | None:
        """What the user should know and do, or None when the store holds what the manifest lists."""
        if self.consistent:
            return None
        lost = "is empty" if self.store_points == 0 else f"lacks {self.missing} of {self.manifest_points} points"
        return (f"the vector store ({self.store}) {lost} although the manifest lists them (was it deleted?): "
                "run `probe index` to rebuild the missing points")


def check_store(ws: Workspace) -> StoreCheck:
    """Count both sides (raises the store's ``ProbeError`` when it cannot be opened at all)."""
    manifest_points = ws.manifest.counts()["chunks"]
    store_points = ws.store.count(StoreFilter(workspace_id=ws.workspace_id)) if manifest_points else 0
    where = public_url(ws.config.qdrant_url) or str(ws.probe_dir / "store" / ws.collection)  # as status shows it
    return StoreCheck(manifest_points, store_points, ws.manifest.get_meta("index_dirty") == "1", where)
