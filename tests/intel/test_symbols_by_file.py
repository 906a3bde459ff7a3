"""Symbols name their file by id (graph layout 9): an index of layout 8, with a path per symbol
row, is migrated in place and answers the same; a conversion that fails leaves a graph made again
(issue 18, item 4: a compact index)."""
from __future__ import annotations

import sqlite3

from probe_core import Workspace
from probe_core.intel import find_callers, graph_store
from probe_core.intel.build import ensure_graph
from probe_core.intel.store import GRAPH_VERSION

from .test_packed_graph import answers, exact, to_layout_8, tree


def _columns(db_path) -> list[str]:
    db = sqlite3.connect(db_path)
    try:
        return [r[1] for r in db.execute("PRAGMA table_info(graph_symbols)")]
    finally:
        db.close()


def test_a_symbol_row_holds_its_files_id_not_its_path(project):
    ws = project("pyproj")
    db_path = ws.root / ".probe" / "manifest.sqlite"
    ws.close()
    assert "file" in _columns(db_path) and "path" not in _columns(db_path) and "language" not in _columns(db_path)


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
