"""The Qdrant server path gives each workspace a collection of its own (``chunks_<preset>_<id>``),
through qdrant-client's local mode: a second repository on the same server changes nothing in the
first one's (its BM25 IDF counts its own chunks, as on Qdrant Edge), a rebuild drops only its own,
and an index made when workspaces shared ``chunks_<preset>`` moves over by itself."""
from __future__ import annotations

import shutil
from pathlib import Path

from probe_core import Workspace, index_workspace, search
from probe_core.indexing.indexer import rebuild
from probe_core.storage.protocol import StoreFilter
from probe_core.storage.qdrant_server import QdrantServerStore


def _open(root: Path) -> Workspace:
    return Workspace.open(root)


def _server(url: str) -> QdrantServerStore:
    return QdrantServerStore.connect(url, "chunks_embedded")


def _collections(url: str) -> set[str]:
    store = _server(url)
    try:
        return {c.name for c in store.client.get_collections().collections}
    finally:
        store.close()


def _index(root: Path) -> tuple[str, int, list]:
    ws = _open(root)
    try:
        index_workspace(ws, dense=False)
        hits = search(ws, "hash a password with a salt", top_k=5).results
        return ws.workspace_id, ws.store.count(), [(h.path, round(h.score, 6)) for h in hits]
    finally:
        ws.close()


def test_two_workspaces_on_one_server_keep_to_their_own_collections(repo, tmp_path, monkeypatch):
    url = f"local:{tmp_path / 'qdrant-local'}"
    monkeypatch.setenv("QDRANT_URL", url)
    first_id, first_count, alone = _index(repo)
    other = tmp_path / "other"
    shutil.copytree(repo, other, ignore=shutil.ignore_patterns(".probe"))
    (other / "notes.md").write_text("password password password salt hash salt\n" * 20)
    other_id, other_count, _ = _index(other)
    assert _collections(url) >= {f"chunks_embedded_{first_id}", f"chunks_embedded_{other_id}"}
    assert "chunks_embedded" not in _collections(url)

    _, count_again, beside = _index(repo)  # the other repository's words do not move its scores
    assert (count_again, beside) == (first_count, alone)

    ws = _open(other)
    try:
        rebuild(ws)  # drops its own collection only
        assert ws.store.count() == 0
    finally:
        ws.close()
    _, count_after, after = _index(repo)
    assert (count_after, after) == (first_count, alone)


def test_an_index_from_the_shared_collection_moves_to_its_own(repo, tmp_path, monkeypatch):
    url = f"local:{tmp_path / 'qdrant-local'}"
    monkeypatch.setenv("QDRANT_URL", url)
    monkeypatch.setattr(Workspace, "collection", property(lambda self: f"chunks_{self.config.preset}"))
    old_id, old_count, old_hits = _index(repo)  # as Probe did before: every workspace in chunks_embedded
    store = _server(url)
    try:
        assert store.count(StoreFilter(workspace_id=old_id)) == old_count > 0
    finally:
        store.close()
    monkeypatch.undo()
    monkeypatch.setenv("QDRANT_URL", url)

    ws_id, count, hits = _index(repo)  # this Probe: its own collection, the shared one left
    assert ws_id == old_id and count == old_count
    assert [p for p, _ in hits] == [p for p, _ in old_hits]
    assert _collections(url) >= {f"chunks_embedded_{ws_id}"}
    assert "chunks_embedded" not in _collections(url)  # it held only this workspace: dropped
