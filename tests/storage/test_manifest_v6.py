"""Manifest schema 6: chunks name their file by id and keep point ids and hashes as bytes
(``storage/manifest_codec.py``). A version-5 manifest is converted in place on open, keeping every
answer and the store's vectors; a manifest newer than the code is refused, untouched. Real Qdrant
Edge, the packaged ONNX embedder, tree-sitter."""
from __future__ import annotations

import sqlite3

import pytest

from probe_core import Workspace, index_workspace, search
from probe_core.errors import IndexTooNew, ProbeError
from probe_core.indexing.dense import fill_dense
from probe_core.indexing.indexer import rebuild
from probe_core.intel.queries import find_callers
from probe_core.storage.manifest import SCHEMA_VERSION, ChunkRow, FileRow, Manifest
from probe_core.storage.manifest_codec import digest, digest_text, pid, pid_text

from .manifest_v5 import to_version_5

QUERIES = ("hash a password with a salt", "route requests to handlers", "parse_line")


def _answers(ws: Workspace) -> dict:
    """Everything the manifest answers, and what searches and callers give from it."""
    m = ws.manifest
    ids = m.chunk_ids()
    paths = sorted(set(ids.values()))
    return {
        "ids": ids, "live": m.chunk_ids(live=True), "chunks": {p: m.chunks_for(p) for p in paths},
        "at": {p: m.chunk_at(p, 3) for p in paths}, "payloads": m.chunk_payloads(list(ids)),
        "donors": {p: m.dense_donors(p) for p in paths}, "tags": m.version_tags(),
        "versions": m.versions_of(list(ids)), "queue": m.pending_dense(10_000),
        "spans": m.queued_spans(list(ids)), "without": m.without_dense(list(ids)), "counts": m.counts(),
        "search": [[(r.path, r.start_line, r.end_line, r.score) for r in search(ws, q, top_k=8).results]
                   for q in QUERIES],
        "callers": [(c.path, c.line) for c in find_callers(ws, "parse_line").items],
    }


def test_a_version_5_index_is_converted_in_place_with_the_same_answers_and_vectors(repo, monkeypatch):
    ws = Workspace.open(repo)
    index_workspace(ws, dense=False)
    fill_dense(ws)
    (repo / "src" / "http" / "headers.py").write_text(
        (repo / "src" / "http" / "headers.py").read_text() + "\n\ndef parse_all(blocks):\n    return blocks\n")
    index_workspace(ws, dense=False)  # a file's new version queued, the others embedded
    before, vectors = _answers(ws), ws.store.count(with_dense=True)
    assert before["queue"] and vectors and before["callers"]
    with ws.parts_closed():
        db = sqlite3.connect(ws.probe_dir / "manifest.sqlite", isolation_level=None)
        to_version_5(db)
        assert db.execute("SELECT typeof(point_id), length(point_id) FROM chunks LIMIT 1").fetchone() == ("text", 36)
        db.close()
    assert ws.manifest.get_meta("schema_version") == str(SCHEMA_VERSION)
    db = ws.manifest._db
    assert {r[0] for r in db.execute("SELECT typeof(point_id) || length(point_id) FROM chunks")} == {"blob16"}
    assert {r[0] for r in db.execute("SELECT typeof(chunk_hash) || length(chunk_hash) FROM chunks")} == {"blob8"}
    assert _answers(ws) == before
    assert ws.store.count(with_dense=True) == vectors  # the store is not touched
    embedded: list[str] = []
    real = ws.embedder.embed_documents
    monkeypatch.setattr(ws.embedder, "embed_documents", lambda texts: embedded.extend(texts) or real(texts))
    assert fill_dense(ws) == len(before["queue"])  # only what was queued is embedded
    assert len(embedded) == len(before["queue"]) and ws.manifest.pending_dense(10) == []


def test_a_manifest_newer_than_the_code_is_refused_untouched(tmp_path):
    path = tmp_path / "m.sqlite"
    m = Manifest(path)
    m.set_meta("schema_version", "8")
    m.close()
    with pytest.raises(IndexTooNew) as err:
        Manifest(path)
    message = str(err.value)
    assert isinstance(err.value, ProbeError) and "\n" not in message
    assert "version 8" in message and "7" in message and "upgrade Probe" in message
    assert "probe index --rebuild" in message
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone() == ("8",)
    db.close()


def test_a_newer_manifest_gives_way_to_a_rebuild(repo):
    ws = Workspace.open(repo)
    index_workspace(ws, dense=False)
    ws.manifest.set_meta("schema_version", "99")
    with ws.parts_closed():
        pass
    with pytest.raises(IndexTooNew):
        ws.manifest.counts()
    rebuild(ws)
    index_workspace(ws, dense=False)
    assert ws.manifest.get_meta("schema_version") == str(SCHEMA_VERSION) and ws.manifest.counts()["chunks"] > 0


@pytest.mark.parametrize("value", ["0f6f0b3c-8a4e-5d8e-9c59-70726f626531", "0F6F0B3C-8A4E-5D8E-9C59-70726F626531",
                                   "a.py-0", "", "0f6f0b3c 8a4e-5d8e-9c59-70726f626531x"[:36],
                                   "0f6f0b3c-8a4e-5d8e-9c59-70726f62653g"])
def test_point_ids_read_back_as_written(value):
    assert pid_text(pid(value)) == value
    assert isinstance(pid(value), bytes) == (value == "0f6f0b3c-8a4e-5d8e-9c59-70726f626531")


@pytest.mark.parametrize("value", ["0123456789abcdef", "0123456789ABCDEF", "h1", "", "0123456789abcdeg"])
def test_hashes_read_back_as_written(value):
    assert digest_text(digest(value)) == value
    assert isinstance(digest(value), bytes) == (value == "0123456789abcdef")


def test_ids_that_are_no_uuids_work_as_before(tmp_path):
    m = Manifest(tmp_path / "m.sqlite")
    chunks = [ChunkRow(f"a.py-{k}", "a.py", k, k * 10 + 1, k * 10 + 9, f"h{k}", None, None, None, False)
              for k in range(3)]
    m.replace_file(FileRow("a.py", 1, 2, "fh", None), "python", "code", chunks, ["x", "y", "z"])
    assert m.chunks_for("a.py") == chunks and m.version_ids("a.py", "fh", live=True) == [c.point_id for c in chunks]
    assert [r[0] for r in m.pending_dense(10)] == [c.point_id for c in chunks]
    m.mark_dense_done(["a.py-1"])
    assert m.without_dense([c.point_id for c in chunks]) == {"a.py-0", "a.py-2"}
    m.remove_file("a.py")
    assert m.chunk_ids() == {} and m._db.execute("SELECT COUNT(*) FROM paths").fetchone()[0] == 0
    m.close()


def test_a_conversion_another_process_finished_first_changes_nothing(tmp_path):
    """Two processes open a version-5 manifest at once: the second finds it converted once it has
    the write lock, and leaves it be."""
    from probe_core.storage import manifest_schema

    m = Manifest(tmp_path / "m.sqlite")
    m.replace_file(FileRow("a.py", 1, 2, "0123456789abcdef", None), "python", "code",
                   [ChunkRow("a.py-0", "a.py", 0, 1, 9, "h0", None, None, None, False)], ["x"])
    before = m.chunk_ids(), m.pending_dense(10)
    manifest_schema._to_compact_chunks(m._db)
    assert (m.chunk_ids(), m.pending_dense(10)) == before and not m._db.in_transaction
    m.close()
