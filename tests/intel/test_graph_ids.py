"""The graph's name and word ids kept in memory while a graph is built from empty
(``GraphStore._ids``): the same ids SQLite gives, another connection's rows noticed, a rolled-back
write forgotten."""
from __future__ import annotations

import sqlite3

import pytest

from probe_core.intel.model import FileGraph, Ref
from probe_core.intel.store import GraphStore


def _file(path: str, names: list[str]) -> tuple[FileGraph, str, set[bytes]]:
    refs = [Ref(path, k + 1, n, "obj" if k % 2 else None, "call", "main", 1) for k, n in enumerate(names)]
    return FileGraph(path, "python", len(names) + 1, refs=refs), "h" + path, {n.encode() for n in names}


def _rows(db_path) -> list:
    db = sqlite3.connect(db_path)
    try:
        return [db.execute(f"SELECT * FROM {t} ORDER BY 1, 2").fetchall()
                for t in ("graph_names", "graph_terms", "graph_refs", "graph_postings", "graph_uses")]
    finally:
        db.close()


BATCHES = [[_file("a.py", ["zeta", "alpha", "mid"]), _file("b.py", ["alpha", "beta"])],
           [_file("c.py", ["gamma", "zeta", "aardvark"])],
           [_file("a.py", ["omega", "alpha"]), _file("d.py", [])]]


def test_ids_in_memory_are_the_ones_sqlite_gives(tmp_path, monkeypatch) -> None:
    fast, plain = GraphStore(tmp_path / "fast.sqlite"), GraphStore(tmp_path / "plain.sqlite")
    monkeypatch.setattr(plain, "_ids", plain._ids_sql)  # the path an existing index takes
    for batch in BATCHES:
        fast.replace_files(batch)
        plain.replace_files(batch)
    assert fast._known["graph_names"].top == 9  # built from empty: kept in memory
    assert _rows(tmp_path / "fast.sqlite") == _rows(tmp_path / "plain.sqlite")
    assert [r.path for r in fast.refs_named("alpha")] == ["a.py", "b.py"]
    fast.forget_ids()
    assert not fast._known
    fast.replace_files([_file("e.py", ["alpha", "new"])])  # not empty any more: SQLite's ids
    assert not fast._known and [r.path for r in fast.refs_named("new")] == ["e.py"]
    fast.close()
    plain.close()


def test_another_connections_rows_are_noticed(tmp_path) -> None:
    path = tmp_path / "m.sqlite"
    ours, theirs = GraphStore(path), GraphStore(path)
    ours.replace_files(BATCHES[0])
    theirs.replace_files([_file("x.py", ["theirs", "zeta"])])  # ids past the ones ours knows
    ours.replace_files(BATCHES[1])  # an id map out of step would reuse their ids: a failed insert
    assert "graph_names" not in ours._known
    for name, paths in {"theirs": ["x.py"], "aardvark": ["c.py"], "zeta": ["a.py", "c.py", "x.py"]}.items():
        assert [r.path for r in ours.refs_named(name)] == paths
    ours.close()
    theirs.close()


def test_a_rolled_back_write_forgets_its_ids(tmp_path, monkeypatch) -> None:
    store = GraphStore(tmp_path / "m.sqlite")
    store.replace_files(BATCHES[0])
    real = store._insert

    def failing(f, *args):
        if f.path == "c.py":
            raise RuntimeError("disk gone")
        return real(f, *args)

    monkeypatch.setattr(store, "_insert", failing)
    with pytest.raises(RuntimeError):
        store.replace_files(BATCHES[1])
    assert not store._known  # the ids of gamma and aardvark were rolled back
    monkeypatch.undo()
    store.replace_files(BATCHES[1])
    assert [r.path for r in store.refs_named("aardvark")] == ["c.py"]
    store.close()
