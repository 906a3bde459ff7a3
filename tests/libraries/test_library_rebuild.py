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


def test_a_large_new_library_reads_each_document_once(tmp_path, monkeypatch):
    """A new library larger than one lexical batch measures its BM25 average length on a sample of
    its documents first; a library reads them in this process (a PDF's text is a parse), so the
    sampled documents' texts and chunks are kept for their own phase instead of read again."""
    from collections import Counter

    from probe_core.indexing import lexical
    from probe_core.libraries.workspace import LibraryProfile

    docs = {f"notes/n{i:03d}.md": f"# Note {i}\n\n" + f"The cache entry {i} expires after {i} seconds.\n" * 40
            for i in range(60)}
    folder = _write(tmp_path / "docs", docs)
    add_library(folder, "big")
    monkeypatch.setattr(lexical, "BATCH_BYTES", 20_000)  # more than one batch: the sample is taken
    reads: Counter = Counter()
    real = LibraryProfile.read
    monkeypatch.setattr(LibraryProfile, "read", lambda self, root, path, **kw: reads.update([path]) or real(self, root, path, **kw))
    ws = _open("big")
    try:
        report = index_workspace(ws, dense=False)
        assert report.files_indexed == 60 and report.files_failed == 0
        assert ws.manifest.get_meta("bm25_avg_len") is not None
        assert set(reads) == set(docs) and max(reads.values()) == 1, reads.most_common(3)
        hits = library_search(ws, "entry 42 expires")["results"]
        assert hits and hits[0]["path"].endswith("n042.md")
    finally:
        ws.close()
