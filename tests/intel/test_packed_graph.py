"""Uses packed per file behind a name → files posting list; an index of the older layout migrated
in place and answering as before (issue 18, item 4: a compact index)."""
from __future__ import annotations

import shutil
import sqlite3

from probe_core import Workspace
from probe_core.intel import (
    find_callees,
    find_callers,
    find_implementations,
    find_references,
    graph_store,
    impact_analysis,
)
from probe_core.intel.build import ensure_graph
from probe_core.intel.extract import extract_file
from probe_core.intel.packing import REF_KINDS
from probe_core.intel.store import GRAPH_VERSION

from .conftest import FIXTURES

ALL = ("call", "ref", "import")
COUNT_POSTINGS = "SELECT SUM((length(files) - 1) / unicode(files)) FROM graph_postings"  # ids / width
# layout 7 (the last before packing), frozen here: what an index made by an older Probe holds
V7_REFS = """
CREATE TABLE graph_refs_v7 (
    file INTEGER NOT NULL, line INTEGER NOT NULL, name INTEGER NOT NULL, qualifier INTEGER,
    kind INTEGER NOT NULL, enclosing INTEGER, enclosing_line INTEGER
);
CREATE TABLE graph_imports (path TEXT NOT NULL, line INTEGER NOT NULL, module TEXT NOT NULL, name TEXT, alias TEXT);
CREATE INDEX graph_imports_path ON graph_imports(path);
"""
# layouts 7 and 8 (before symbols by file id), frozen here
V8_SYMBOLS = """
CREATE TABLE graph_symbols_v8 (
    id INTEGER PRIMARY KEY, path TEXT NOT NULL, name TEXT NOT NULL, qualname TEXT NOT NULL,
    kind TEXT NOT NULL, line INTEGER NOT NULL, end_line INTEGER NOT NULL, signature TEXT,
    doc TEXT, parent TEXT, language TEXT
);
"""

# layouts 7 to 9 (before the word postings were packed per word), frozen here
V9_POSTINGS = """
CREATE TABLE graph_postings_v9 (
    term INTEGER NOT NULL, file INTEGER NOT NULL, PRIMARY KEY (term, file)
) WITHOUT ROWID;
"""


def tree(tmp_path):
    """One tree of every fixture language (Python, Go, Rust, TypeScript, Java, C, C#, PHP, Ruby)."""
    root = tmp_path / "all"
    for name in ("pyproj", "goproj", "rustproj", "tsproj", "javaproj", "cproj", "csharpproj", "phpproj", "rubyproj"):
        shutil.copytree(FIXTURES / name, root / name)
    return root


def exact(ws: Workspace) -> list[str]:
    """What the word postings answer: the files holding a few words (``retrieval/term_index.py``)."""
    from probe_core.retrieval.term_index import term_index

    index = term_index(ws)
    index.refresh(ws, graph_store(ws))
    return [f"{m[0]} {word}" for word in (b"area", b"Shape", b"fib", b"impl", b"def")
            for m in term_index(ws).candidates(graph_store(ws), word, case=True, bounded=True)]


def answers(ws: Workspace) -> dict:
    names = sorted({r[0] for r in graph_store(ws)._rows("SELECT name FROM graph_symbols WHERE kind != 'impl'")})
    assert len(names) > 60
    out = {}
    for name in names:
        for verb, call in (("callers", lambda: find_callers(ws, name, depth=2)),
                           ("callees", lambda: find_callees(ws, name, depth=2)),
                           ("refs", lambda: find_references(ws, name, include_declaration=True)),
                           ("impls", lambda: find_implementations(ws, name)),
                           ("impact", lambda: impact_analysis(ws, name, depth=2))):
            out[f"{verb} {name}"] = call().to_dict()
    return out


def test_uses_are_packed_per_file_and_read_back_as_extracted(project):
    """A use was a row with two indexes (171 MB of a 2.9M-line monorepo's index): now one row per
    file, found through (name, file) postings; every name's uses and every range's come back as
    the extractor gave them, in path and line order."""
    ws = project("pyproj")
    store = graph_store(ws)
    assert find_callers(ws, "factorial").items
    db = sqlite3.connect(ws.probe_dir / "manifest.sqlite")
    uses_rows = db.execute("SELECT COUNT(*) FROM graph_uses").fetchone()[0]
    postings = db.execute("SELECT COUNT(*), COUNT(DISTINCT name) FROM graph_refs").fetchone()
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    db.close()
    assert "graph_imports" not in tables  # packed with the uses
    paths = [p for p, _, _ in store.files()]
    assert 0 < uses_rows <= len(paths) and postings[0] < store.counts()["refs"]

    expected = {}
    for path in paths:
        graph = extract_file(path, (ws.root / path).read_text())
        assert store.imports_of(path) == graph.imports
        refs = sorted(graph.refs, key=lambda r: r.line)  # stable: a line's uses as extracted
        assert store.refs_in(path, 1, graph.lines + 1, ALL) == refs
        if refs:
            mid = refs[len(refs) // 2].line
            assert store.refs_in(path, mid, mid, ("call",)) == [r for r in refs if r.line == mid and r.kind == "call"]
        for r in refs:
            expected.setdefault(r.name, []).append(r)
    assert sum(map(len, expected.values())) == store.counts()["refs"]
    for name, refs in expected.items():
        refs.sort(key=lambda r: (r.path, r.line, REF_KINDS.index(r.kind)))
        assert store.refs_named(name) == refs
        calls = [r for r in refs if r.kind == "call"]
        assert store.refs_named(name, ("call",)) == calls
        assert store.refs_named(name, ("call",), limit=1) == calls[:1]
    assert store.refs_named("no_such_name") == []


def to_layout_9(db_path) -> None:
    """Rewrite the graph's word postings as layouts 7 to 9 stored them: a (term, file) row each."""
    from array import array

    db = sqlite3.connect(db_path)
    rows = []
    for term, blob in db.execute("SELECT term, files FROM graph_postings").fetchall():
        files = array("H" if blob[0] == 2 else "I")  # the width byte, then little-endian ids
        files.frombytes(blob[1:])
        rows += [(term, f) for f in files]
    db.executescript(V9_POSTINGS)
    db.executemany("INSERT INTO graph_postings_v9(term, file) VALUES(?,?)", sorted(rows))
    db.commit()
    db.executescript("""
        DROP TABLE graph_postings; ALTER TABLE graph_postings_v9 RENAME TO graph_postings;
        UPDATE graph_meta SET value='9' WHERE key='version';
    """)
    db.close()


def to_layout_8(db_path) -> None:
    """Rewrite the graph's symbols as layouts 7 and 8 stored them: a path and a language per row."""
    to_layout_9(db_path)
    db = sqlite3.connect(db_path)
    db.executescript(V8_SYMBOLS)
    from probe_core.intel.migrate_symbols import QUALNAME

    db.execute(f"INSERT INTO graph_symbols_v8 SELECT s.id, f.path, s.name, {QUALNAME}, s.kind, s.line, s.end_line,"
               " s.signature, s.doc, s.parent, f.language FROM graph_symbols s JOIN graph_files f ON f.id = s.file")
    db.commit()
    db.executescript("""
        DROP TABLE graph_symbols; ALTER TABLE graph_symbols_v8 RENAME TO graph_symbols;
        CREATE INDEX graph_symbols_name ON graph_symbols(name);
        CREATE INDEX graph_symbols_path ON graph_symbols(path, line);
        CREATE INDEX graph_symbols_parent ON graph_symbols(parent);
        UPDATE graph_meta SET value='8' WHERE key='version';
    """)
    db.close()


def _to_layout_7(db_path) -> None:
    """Rewrite the graph's uses, imports and word ids as layout 7 stored them (a row per use, per
    import; 4 bytes a word id)."""
    from array import array

    from probe_core.intel.packing import Uses, unpack_imports, unpack_terms

    to_layout_8(db_path)
    db = sqlite3.connect(db_path)
    db.executescript(V7_REFS)
    for file_id, path, uses, imports in db.execute(
            "SELECT u.file, f.path, u.uses, u.imports FROM graph_uses u JOIN graph_files f ON f.id = u.file").fetchall():
        db.executemany("INSERT INTO graph_refs_v7 VALUES(?,?,?,?,?,?,?)",
                       [(file_id, line, name, q or None, kind, e or None, el or None)
                        for _, name, line, kind, q, e, el in Uses(uses).rows()])
        db.executemany("INSERT INTO graph_imports VALUES(?,?,?,?,?)",
                       [(i.path, i.line, i.module, i.name, i.alias) for i in unpack_imports(path, imports)])
    db.executemany("UPDATE graph_files SET terms=? WHERE id=?", [
        (array("I", unpack_terms(terms)).tobytes(), file_id)
        for file_id, terms in db.execute("SELECT id, terms FROM graph_files WHERE terms IS NOT NULL").fetchall()])
    db.commit()
    db.executescript("""
        DROP TABLE graph_uses; DROP TABLE graph_refs; ALTER TABLE graph_refs_v7 RENAME TO graph_refs;
        CREATE INDEX graph_refs_name ON graph_refs(name, kind);
        CREATE INDEX graph_refs_file ON graph_refs(file, line);
        UPDATE graph_meta SET value='7' WHERE key='version';
    """)
    db.close()


def test_an_index_of_the_older_layout_is_migrated_in_place_and_answers_the_same(tmp_path):
    """An index made before packing (layout 7) is converted when the graph is opened: no file is
    read or parsed again, the word postings stay, and every question gets the same answer."""
    from probe_core import index_workspace

    root = tree(tmp_path)
    ws = Workspace.open(root)
    index_workspace(ws, dense=False)
    before = answers(ws), exact(ws)
    epoch, counts = graph_store(ws).terms_epoch(), graph_store(ws).counts()
    ws.close()
    _to_layout_7(root / ".probe" / "manifest.sqlite")

    ws = Workspace.open(root)
    try:
        store = graph_store(ws)
        assert store._rows("SELECT value FROM graph_meta WHERE key='version'")[0][0] == GRAPH_VERSION
        assert store.terms_epoch() == epoch and store.counts() == counts  # converted, not dropped
        assert ensure_graph(ws) == {"updated": 0, "removed": 0}  # nothing to graph again
        assert (answers(ws), exact(ws)) == before
        assert any(p.startswith("pyproj/shapes/base.py ") for p in before[1])
        from probe_core.intel.packing import unpack_terms

        (terms,) = store._rows("SELECT terms FROM graph_files WHERE path='pyproj/shapes/base.py'")[0]
        postings = store._rows(COUNT_POSTINGS)[0][0]
        (root / "pyproj" / "shapes" / "base.py").unlink()  # a file's postings are found and deleted
        index_workspace(ws, dense=False)
        assert store._rows(COUNT_POSTINGS)[0][0] == postings - len(unpack_terms(terms)) > 0
    finally:
        ws.close()


def test_a_conversion_that_fails_leaves_a_graph_made_again_from_the_files(project, monkeypatch):
    """A layout-7 graph that cannot be converted (here: the conversion raises) is dropped, as any
    older layout is, and graphed again from the files: the answers stay right."""
    from probe_core.intel import migrate

    ws = project("pyproj")
    before = find_callers(ws, "factorial").to_dict()
    root = ws.root
    ws.close()
    _to_layout_7(root / ".probe" / "manifest.sqlite")

    def broken(db):
        raise OSError("disk full")

    monkeypatch.setattr(migrate, "_pack", broken)
    ws = Workspace.open(root)
    try:
        assert graph_store(ws).counts()["refs"] == 0  # dropped, not half converted
        assert find_callers(ws, "factorial").to_dict() == before  # graphed again on the first query
    finally:
        ws.close()
