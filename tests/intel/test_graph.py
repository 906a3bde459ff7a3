"""The graph follows the index (incremental updates, deletions, rebuilds) and map_code."""
from __future__ import annotations

import json

import pytest

from probe_cli import intel_verbs
from probe_core import index_workspace
from probe_core.intel import (
    BadQuery,
    SymbolNotFound,
    find_callers,
    graph_store,
    map_code,
    rebuild_graph,
)

from .conftest import line_of, locations


def test_incremental_update_and_deletion(project):
    ws = project("pyproj")
    assert graph_store(ws).symbols_named("factorial")
    extra = ws.root / "shapes" / "extra.py"
    extra.write_text("from .mathutil import factorial\n\n\ndef twice():\n    return factorial(2) * 2\n")
    index_workspace(ws, dense=False)
    assert ("shapes/extra.py", 5) in locations(find_callers(ws, "factorial"))
    extra.unlink()
    index_workspace(ws, dense=False)
    assert not any(p == "shapes/extra.py" for p, _ in locations(find_callers(ws, "factorial")))
    assert graph_store(ws).symbols_named("twice") == []


def test_rebuild_and_lazy_catch_up(project):
    ws = project("goproj")
    store = graph_store(ws)
    store.remove_files([p for p, _, _ in store.files()])  # as for an index older than the graph
    assert find_callers(ws, "fib").items  # ensure_graph graphs what the manifest lists
    counts = rebuild_graph(ws)
    assert counts["files"] >= 3 and counts["symbols"] > 5


def test_a_full_index_run_repairs_an_emptied_graph(project):
    """After an upgrade empties the graph (a new GRAPH_VERSION), the next `probe index` rebuilds it,
    not the first code-intelligence call: search's graph evidence reads it before any such call."""
    ws = project("pyproj")
    store = graph_store(ws)
    before = store.counts()
    store.remove_files([p for p, _, _ in store.files()])
    assert store.counts()["symbols"] == 0
    report = index_workspace(ws, dense=False)  # nothing changed on disk
    assert report.files_indexed == 0 and store.counts() == before


def test_map_code_levels_and_budget(project):
    ws = project("pyproj")
    files = map_code(ws, ".", depth=1, detail="files")
    assert files.dirs and all("symbols" not in i for i in files.items)
    sigs = map_code(ws, "shapes", depth=2, detail="signatures")
    base = next(i for i in sigs.items if i["path"] == "shapes/base.py")
    assert {"Shape", "Shape.area", "Circle"} <= {s["name"] for s in base["symbols"]}
    full = map_code(ws, "shapes", detail="full")
    assert "A shape; subclasses override area()." in full.text
    small = map_code(ws, ".", depth=3, detail="full", max_tokens=256)  # the least any face accepts
    assert not small.truncated and len(small.text) <= 1024  # (cuts: test_answers_as_asked.py)
    py_only = map_code(ws, ".", depth=3, language="python")
    assert all(i["language"] == "python" for i in py_only.items)
    with pytest.raises(BadQuery):
        map_code(ws, detail="everything")


def test_bad_targets(project):
    ws = project("pyproj")
    with pytest.raises(BadQuery):
        find_callers(ws)
    with pytest.raises(SymbolNotFound):
        find_callers(ws, file="nope.py", line=3)
    with pytest.raises(BadQuery):
        find_callers(ws, "factorial", max_results=0)


def test_cli_verbs_print_the_tool_json(project, capsys):
    import argparse

    ws = project("pyproj")
    parser = argparse.ArgumentParser(prog="probe")
    sub = parser.add_subparsers(dest="command")
    intel_verbs.register(sub)
    line = line_of(ws, "shapes/mathutil.py", "def factorial")
    args = parser.parse_args(["callers", "factorial", "--root", str(ws.root), "--json",
                              "--file", "shapes/mathutil.py", "--line", str(line)])
    assert args.func(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["source"] == "treesitter" and out["target"]["line"] == line
    assert all({"path", "line", "symbol", "kind", "context", "confidence"} <= set(i) for i in out["items"])
    for verb in (["callees", "report"], ["refs", "Shape"], ["impls", "Shape"], ["impact", "Shape"],
                 ["map", "shapes", "--detail", "full"]):
        args = parser.parse_args([*verb, "--root", str(ws.root)])
        assert args.func(args) == 0
    assert "Shape" in capsys.readouterr().out


def test_a_lazy_graph_catch_up_ends_cached_searches(project):
    """Search reads the graph (graph evidence) and caches its answers per index state: a code-
    intelligence call that changes the graph must end them, and one that changes nothing must not."""
    from probe_core import search

    ws = project("pyproj")
    store = graph_store(ws)
    store.remove_files([p for p, _, _ in store.files()])  # emptied, as an upgrade leaves it
    query = "factorial of a number"
    search(ws, query)
    assert search(ws, query).extra.get("cached")
    assert find_callers(ws, "factorial").items  # ensure_graph graphs every file again
    assert not search(ws, query).extra.get("cached")
    find_callers(ws, "factorial")  # the graph is current: nothing changes
    assert search(ws, query).extra.get("cached")
    rebuild_graph(ws)
    assert not search(ws, query).extra.get("cached")


def test_uses_are_stored_as_integers_and_an_older_layout_is_rebuilt(project):
    """graph_refs was four strings a row (path, name, qualifier, enclosing): 212 MB on a 1.87M-line
    monorepo. Uses now hold ids; a manifest with the older layout is rebuilt, not misread."""
    import sqlite3

    from probe_core.intel.store import GraphStore

    ws = project("pyproj")
    assert find_callers(ws, "factorial").items
    db = sqlite3.connect(ws.probe_dir / "manifest.sqlite")
    kinds = set(db.execute("SELECT typeof(file), typeof(name), typeof(kind) FROM graph_refs").fetchall())
    assert kinds == {("integer", "integer", "integer")}
    # an older layout (version 4: strings per use)
    db.executescript("DROP TABLE graph_refs; CREATE TABLE graph_refs (path TEXT, line INTEGER, name TEXT,"
                     " qualifier TEXT, kind TEXT, enclosing TEXT, enclosing_line INTEGER);"
                     "UPDATE graph_meta SET value='4' WHERE key='version';")
    db.close()
    store = GraphStore(ws.probe_dir / "manifest.sqlite")
    assert store.counts()["refs"] == 0 and store.files() == []  # dropped and made anew
    store.close()
    assert find_callers(ws, "factorial").items  # the next query graphs the files again


def test_queued_updates_are_read_and_a_lost_queue_is_repaired(project):
    """The indexer's per-file updates are written 200 files at a time (a commit per file rewrote
    every page the word postings touched); a read writes the queue first, and a queue lost to a
    crash is graphed again from the manifest."""
    from probe_core.intel.build import ensure_graph, file_changed

    ws = project("pyproj")
    store = graph_store(ws)
    file_changed(ws, "queued_only.py", "def queued_fn():\n    pass\n", "h1")
    assert store._queued  # not written yet...
    assert [s.name for s in store.symbols_named("queued_fn")] == ["queued_fn"]  # ...but read
    assert not store._queued

    extra = ws.root / "extra.py"
    extra.write_text("def lost_fn():\n    return 1\n")
    index_workspace(ws, dense=False)
    store._queued.clear()  # as if the process died before writing it
    with store._lock:
        store._db.execute("DELETE FROM graph_symbols WHERE file IN (SELECT id FROM graph_files WHERE path='extra.py')")
        store._db.execute("DELETE FROM graph_files WHERE path='extra.py'")
    assert ensure_graph(ws)["updated"] >= 1
    assert [s.path for s in store.symbols_named("lost_fn")] == ["extra.py"]


def test_an_answer_reads_the_source_lines_of_the_items_it_keeps_only(project):
    """callers of a name with thousands of uses read every file holding one for its context line
    (`callers Errorf` on Go's library: 2.9 s); only the kept items' lines are read now."""
    from probe_core.intel.queries import QueryContext, caller_items, finish, reference_items

    ws = project("pyproj")
    ctx = QueryContext(ws)
    targets = ctx.targets("factorial", None, None)
    items = caller_items(ctx, targets, 1) + reference_items(ctx, targets)
    assert len({i.path for i in items}) > 1 and not ctx._lines  # resolved without reading a file
    kept = finish(targets, items, 1, 4000, context=ctx.line_text).items
    assert len(kept) == 1 and "factorial" in kept[0].context
    assert set(ctx._lines) == {kept[0].path}
