"""Symbols name their file by id (graph layout 9): an index of layout 8, with a path per symbol
row, is migrated in place and answers the same; a conversion that fails leaves a graph made again
(issue 18, item 4: a compact index)."""
from __future__ import annotations

import sqlite3

from probe_core import Workspace
from probe_core.intel import find_callers, graph_store
from probe_core.intel.build import ensure_graph
from probe_core.intel.extract import extract_file
from probe_core.intel.store import GRAPH_VERSION

from .test_packed_graph import answers, exact, to_layout_8, tree


def _columns(db_path) -> list[str]:
    db = sqlite3.connect(db_path)
    try:
        return [r[1] for r in db.execute("PRAGMA table_info(graph_symbols)")]
    finally:
        db.close()


def test_a_symbol_row_holds_its_files_id_and_reads_back_as_extracted(tmp_path):
    """No path or language per row, no qualified name where it is ``parent.name``; every symbol of
    every fixture language reads back exactly as extracted (a scoped variable's qualname is kept)."""
    from dataclasses import replace

    from probe_core import index_workspace

    ws = Workspace.open(tree(tmp_path))
    try:
        index_workspace(ws, dense=False)
        store = graph_store(ws)
        columns = _columns(ws.root / ".probe" / "manifest.sqlite")
        assert "file" in columns and "path" not in columns and "language" not in columns
        assert store._rows("SELECT COUNT(*) FROM graph_symbols WHERE qualname IS NULL")[0][0] > 50
        for path, _, _ in store.files():
            extracted = extract_file(path, (ws.root / path).read_text()).symbols
            assert [replace(s, id=None) for s in store.symbols_in(path)] == sorted(extracted, key=lambda s: s.line)
    finally:
        ws.close()


def test_a_qualified_name_that_is_not_parent_dot_name_is_kept(tmp_path):
    from probe_core.intel.model import FileGraph, Symbol
    from probe_core.intel.store import GraphStore

    symbols = [Symbol("a.go", "Outer", "Outer", "function", 1, 9, language="go"),
               Symbol("a.go", "limit", "limit", "constant", 2, 2, parent="Outer", language="go"),
               Symbol("a.go", "m", "Outer.m", "method", 3, 4, parent="Outer", language="go"),
               Symbol("a.go", "n", "pkg.T.n", "method", 5, 6, parent="T", language="go")]
    store = GraphStore(tmp_path / "graph.sqlite")
    try:
        store.replace_files([(FileGraph("a.go", "go", 9, symbols=list(symbols)), "h1", None)])
        assert [(s.qualname, s.parent) for s in store.symbols_in("a.go")] == [(s.qualname, s.parent) for s in symbols]
        assert store._rows("SELECT qualname FROM graph_symbols ORDER BY line") == [(None,), ("limit",), (None,), ("pkg.T.n",)]
    finally:
        store.close()


def test_an_index_of_layout_8_is_migrated_in_place_and_answers_the_same(tmp_path):
    from probe_core import index_workspace

    root = tree(tmp_path)
    ws = Workspace.open(root)
    index_workspace(ws, dense=False)
    store = graph_store(ws)
    before = answers(ws), exact(ws)
    symbols = [(s.id, s.path, s.name, s.line, s.language) for s in store.symbols_of_kind(("function", "method"))]
    epoch, counts = store.terms_epoch(), store.counts()
    ws.close()
    db_path = root / ".probe" / "manifest.sqlite"
    to_layout_8(db_path)
    assert "path" in _columns(db_path)

    ws = Workspace.open(root)
    try:
        store = graph_store(ws)
        assert store._rows("SELECT value FROM graph_meta WHERE key='version'")[0][0] == GRAPH_VERSION
        assert store.terms_epoch() == epoch and store.counts() == counts  # converted, not dropped
        assert ensure_graph(ws) == {"updated": 0, "removed": 0}  # nothing to graph again
        assert [(s.id, s.path, s.name, s.line, s.language)
                for s in store.symbols_of_kind(("function", "method"))] == symbols
        assert (answers(ws), exact(ws)) == before
        assert "path" not in _columns(db_path)
        assert store._rows("SELECT COUNT(*) FROM graph_symbols WHERE qualname IS NULL")[0][0] > 50
    finally:
        ws.close()


def test_a_failed_conversion_of_layout_8_leaves_a_graph_made_again(project, monkeypatch):
    from probe_core.intel import migrate_symbols

    ws = project("pyproj")
    before = find_callers(ws, "factorial").to_dict()
    root = ws.root
    ws.close()
    to_layout_8(root / ".probe" / "manifest.sqlite")

    real = migrate_symbols.symbol_statements

    def broken(schema, *, keep):  # fails inside the conversion's transaction, after the table's rename
        if keep:
            raise OSError("disk full")
        return real(schema, keep=keep)

    monkeypatch.setattr(migrate_symbols, "symbol_statements", broken)
    ws = Workspace.open(root)
    try:
        assert graph_store(ws).counts()["symbols"] == 0  # dropped, not half converted
        assert find_callers(ws, "factorial").to_dict() == before  # graphed again on the first query
    finally:
        ws.close()
