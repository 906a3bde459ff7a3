"""Branch bookkeeping for one index run: which branches have which version of each file.

Every point's ``branch`` payload is the list of branches whose last-indexed working tree had that
version of the file, so ``branch = "main"`` (a Qdrant keyword match on an array) finds exactly
main's versions. When a checkout changes a file, the old version's points stay (retagged) if
another branch still has it, and switching back revives them without chunking or embedding.
Unchanged files only gain the new branch in their tag. A branch that no longer exists in the
repository loses its tags, and versions no branch has any more are deleted.

Outside git (no branch), and in a reference library's index, nothing is tracked and the tag is
an empty list.

Order of writes: a tag change goes to the store *before* the ``branch_files`` rows it follows from,
so a stop in between leaves rows that still call for the change (done again next run); and
reconciliation after an unclean stop re-derives every tag from the manifest (``retag_all``).
"""
from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Collection

from ..gitrefs import local_branches
from ..workspace import Workspace

log = logging.getLogger("probe.index")

_BATCH = 1000


class BranchBook:
    def __init__(self, ws: Workspace):
        self.ws = ws
        self.branch = ws.branch
        self.enabled = bool(self.branch)

    def tags(self, path: str, file_hash: str) -> list[str]:
        """The branch list a version's points carry."""
        return self.ws.manifest.branches_holding(path, file_hash) if self.enabled else []

    def checkout_has(self, path: str, file_hash: str | None) -> None:
        """Record the current branch's version of ``path`` (``None``: the file is gone)."""
        if self.enabled:
            self.ws.manifest.set_branch_file(self.branch, path, file_hash)

    def checkout_has_all(self, versions: list[tuple[str, str]]) -> None:
        """``checkout_has`` of many (path, file_hash) versions, in one transaction."""
        if self.enabled and versions:
            self.ws.manifest.set_branch_files(self.branch, versions)

    def leave(self, path: str, old_hash: str | None, new_hash: str | None) -> bool:
        """The checkout no longer has ``old_hash`` of ``path`` (it has ``new_hash``, or nothing).
        Returns True when its points are kept (retagged) for other branches, False when they were
        deleted from the store; the manifest change follows in the caller's transaction
        (``retain_old``). The same version redone (after an error) is replaced, never kept."""
        man, store = self.ws.manifest, self.ws.store
        live_ids = [c.point_id for c in man.chunks_for(path)]
        holders = self.tags(path, old_hash) if old_hash and old_hash != new_hash else []
        if holders:
            store.set_payload_ids(live_ids, {"branch": holders})
            return True
        store.delete_ids(live_ids)
        return False

    def tag_unchanged(self) -> int:
        """Add the current branch to the tags of checked-out versions it does not list yet
        (after a checkout, most files). Returns how many files were retagged."""
        if not self.enabled:
            return 0
        man = self.ws.manifest
        groups: dict[tuple[str, ...], list[str]] = defaultdict(list)
        todo = man.untracked_on(self.branch)
        for path, file_hash in todo:
            holders = sorted({*man.branches_holding(path, file_hash), self.branch})
            groups[tuple(holders)].extend(c.point_id for c in man.chunks_for(path))
        for holders, ids in groups.items():  # the store first: see the module docstring
            for start in range(0, len(ids), _BATCH):
                self.ws.store.set_payload_ids(ids[start:start + _BATCH], {"branch": list(holders)})
        man.set_branch_files(self.branch, todo)
        return len(todo)

    def prune_deleted(self) -> dict:
        """Forget branches the repository no longer has; delete versions nobody has any more."""
        if not self.enabled:
            return {}
        existing = local_branches(self.ws.root)
        if existing is None:
            return {}
        man, store = self.ws.manifest, self.ws.store
        gone = [b for b in man.branches() if b not in existing and b != self.branch]
        for branch in gone:
            for path, file_hash in man.branch_versions(branch):  # retag first, then forget the branch
                holders = [b for b in man.branches_holding(path, file_hash) if b != branch]
                live = man.is_live_version(path, file_hash)
                if live or holders:
                    store.set_payload_ids(man.version_ids(path, file_hash, live=live), {"branch": holders})
            man.forget_branch(branch)
        dropped = 0
        for path, file_hash in man.unheld_versions():  # nobody has these versions any more
            ids = man.version_ids(path, file_hash, live=False)
            store.delete_ids(ids)  # store first: a stop in between leaves rows, never orphan points
            man.drop_version(path, file_hash)
            dropped += len(ids)
        if gone or dropped:
            log.info("branches gone from the repository: %s (%d points deleted)", ", ".join(gone) or "-", dropped)
            self.ws.touch()
        return {"branches_removed": gone, "points_deleted": dropped} if gone or dropped else {}


def retag_all(ws: Workspace, present: Collection[str]) -> int:
    """Give every point the tag the manifest's ``branch_files`` call for (after an unclean stop).
    ``present``: the ids the store holds (a missing point is redone by its file, not tagged).
    Returns how many points were written."""
    if not BranchBook(ws).enabled:
        return 0
    groups: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for pid, joined in ws.manifest.version_tags():
        if pid not in present:
            continue
        groups[tuple(sorted(joined.split("\x1f"))) if joined else ()].append(pid)
    for holders, ids in groups.items():
        for start in range(0, len(ids), _BATCH):
            ws.store.set_payload_ids(ids[start:start + _BATCH], {"branch": list(holders)})
    return sum(len(ids) for ids in groups.values())
