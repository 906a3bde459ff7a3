"""A library's index: documents only, library payloads, HTML as text, snippets from the index,
sync vs incremental deletions — real Qdrant Edge, real chunkers, the packaged embedder."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from probe_core import sparse
from probe_core.indexing.indexer import index_workspace
from probe_core.libraries import add_library, list_libraries, open_document
from probe_core.libraries import registry
from probe_core.libraries.search import library_search
from probe_core.storage.protocol import HybridQuery
from probe_core.workspace import Workspace

DOCS = {
    "guide.md": "# Guide\n\n## Pools\n\nA connection pool hands out pooled sockets.\n",
    "notes.txt": "Eviction uses an LRU policy with a ttl of 30 seconds.\n",
    "api/ref.rst": "Reference\n=========\n\nThe frobnicate function returns a widget.\n",
    "web/page.html": ("<html><head><script>var tracking = 1;</script></head><body><h1>Quotas</h1>"
                      "<p>Each tenant gets 500 requests per minute.</p></body></html>"),
    "web/old.htm": "<p>Legacy quota page with ratelimit headers.</p>",
    "script.py": "def frobnicate():\n    return 'widget'\n",
    "data.json": '{"frobnicate": true}\n',
}


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, "utf-8")
    return root


def _open(name: str) -> Workspace:
    entry = registry.get(name)
    return Workspace.open(entry["path"], probe_dir=registry.index_dir(name))


def _payloads(ws: Workspace, query: str) -> list[dict]:
    return [h.payload for h in ws.store.hybrid_query(HybridQuery(sparse=sparse.embed_query(query), dense=None, limit=100))]


@pytest.fixture
def library(tmp_path):
    folder = _write(tmp_path / "docs", DOCS)
    add_library(folder, "kb")
    ws = _open("kb")
    yield folder, ws
    ws.close()


def test_documents_only_with_library_payloads(library):
    folder, ws = library
    before = sorted(p.name for p in folder.rglob("*"))
    report = index_workspace(ws, dense=False)
    assert sorted(ws.manifest.file_paths()) == ["api/ref.rst", "guide.md", "notes.txt", "web/old.htm", "web/page.html"]
    assert report.files_indexed == 5
    assert ws.probe_dir == registry.index_dir("kb").resolve() and not (folder / ".probe").exists()
    assert sorted(p.name for p in folder.rglob("*")) == before  # the folder is only read
    payloads = _payloads(ws, "frobnicate widget quota tenant pool lru")
    assert {p["file_path"] for p in payloads} == set(ws.manifest.file_paths())
    assert {(p["collection"], p["library_name"], p["chunk_kind"]) for p in payloads} == {("libraries", "kb", "doc")}
    assert {p["language"] for p in payloads if p["file_path"].startswith("web/")} == {"html"}
    [lib] = list_libraries()
    assert lib["files"] == 5 and lib["chunks"] == len(ws.manifest.chunk_ids())


def test_html_is_indexed_and_shown_as_its_text(library):
    _, ws = library
    index_workspace(ws)  # with dense vectors (the packaged MiniLM)
    out = library_search(ws, "how many requests per minute does a tenant get", top_k=3)
    top = out["results"][0]
    assert top["path"] == "library:kb/web/page.html" and top["collection"] == "libraries"
    assert top["snippet"] == "# Quotas\n\nEach tenant gets 500 requests per minute."
    assert top["signals"]["dense_rank"] is not None and out["status"] == "healthy"
    assert _payloads(ws, "tracking") == [] and _payloads(ws, "tenant")  # script text is not indexed
    opened = open_document(top["source"])
    assert opened["lines"][:3] == ["# Quotas", "", "Each tenant gets 500 requests per minute."]
    assert opened["index_state"] == "current" and opened["file"].endswith("web/page.html")


def test_an_edit_replaces_the_kept_text(library):
    folder, ws = library
    index_workspace(ws, dense=False)
    (folder / "notes.txt").write_text("Eviction now uses LFU with a ttl of 90 seconds.\n")
    index_workspace(ws, dense=False)
    [hit] = [r for r in library_search(ws, "eviction ttl seconds")["results"] if r["path"].endswith("notes.txt")]
    assert hit["snippet"] == "Eviction now uses LFU with a ttl of 90 seconds."
    db = sqlite3.connect(ws.probe_dir / "manifest.sqlite")
    assert db.execute("SELECT COUNT(*) FROM library_texts WHERE path='notes.txt'").fetchone()[0] == 1
    db.close()


@pytest.mark.parametrize("mode", ["sync", "incremental"])
def test_deleted_documents_by_mode(tmp_path, mode):
    folder = _write(tmp_path / "docs", DOCS)
    add_library(folder, "kb", mode=mode)
    ws = _open("kb")
    try:
        index_workspace(ws, dense=False)
        (folder / "notes.txt").unlink()
        (folder / "web" / "page.html").unlink()
        report = index_workspace(ws, dense=False)
        paths = {r["path"] for r in library_search(ws, "eviction lru ttl tenant quotas requests", top_k=20)["results"]}
        kept = {"library:kb/notes.txt", "library:kb/web/page.html"}
        if mode == "sync":
            assert report.files_deleted == 2 and not kept & paths
            assert "notes.txt" not in ws.manifest.file_paths()
            with pytest.raises(Exception, match="no such document"):
                open_document("library:kb/notes.txt")
        else:
            assert report.files_deleted == 0 and kept <= paths
            opened = open_document("library:kb/web/page.html")
            assert opened["index_state"] == "stale" and "no longer in the library folder" in opened["message"]
    finally:
        ws.close()


def test_one_embedder_for_a_project_and_its_libraries(library, repo):
    _, lib_ws = library
    project = Workspace.open(repo)
    try:
        assert project.embedder is lib_ws.embedder
    finally:
        project.close()


def test_a_library_folder_in_git_is_indexed_as_it_is_not_per_branch(tmp_path):
    """A cloned docs repository as a library: a checkout replaces its documents (no branch tags,
    no versions kept), and search shows what the folder holds now."""
    import subprocess

    folder = _write(tmp_path / "wiki", {"pool.md": "# Pool\n\nTwenty connections per worker.\n"})
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "v1"], ["checkout", "-qb", "v2"]):
        subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True, env=env)
    add_library(folder, "wiki")
    ws = _open("wiki")
    try:
        assert ws.branch == ""
        index_workspace(ws, dense=False)
        (folder / "pool.md").write_text("# Pool\n\nFifty connections per worker.\n")
        index_workspace(ws, dense=False)
        assert ws.manifest.chunk_ids(live=False) == {} and ws.manifest.branches() == []
        assert {tuple(p["branch"]) for p in _payloads(ws, "connections worker")} == {()}
        [hit] = library_search(ws, "how many connections per worker")["results"]
        assert "Fifty" in hit["snippet"]
    finally:
        ws.close()
