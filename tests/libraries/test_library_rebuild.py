"""A library's index rebuilt from its folder (``--rebuild``, or the repair of a damaged index)
keeps its documents' texts: the table that holds them belongs to the manifest, which a rebuild
makes anew (the rebuilt library came back with every document "chunking failed: no such table")."""
from __future__ import annotations

from probe_core.indexing.indexer import index_workspace, rebuild
from probe_core.libraries import add_library
from probe_core.libraries.search import library_search

from .test_library_index import DOCS, _open, _write


def test_a_rebuilt_library_indexes_and_shows_its_documents_again(tmp_path):
    folder = _write(tmp_path / "docs", DOCS)
    add_library(folder, "kb")
    ws = _open("kb")
    try:
        index_workspace(ws, dense=False)
        rebuild(ws)
        report = index_workspace(ws, dense=False)
        assert report.files_failed == 0 and report.errors == []
        assert report.files_indexed == 5
        [hit] = [r for r in library_search(ws, "eviction ttl seconds")["results"] if r["path"].endswith("notes.txt")]
        assert hit["snippet"] == DOCS["notes.txt"].strip()
    finally:
        ws.close()
