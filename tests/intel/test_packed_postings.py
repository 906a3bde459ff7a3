"""The word postings packed one row per word (graph layout 10; issue 18, item 4: a compact index):
lists round-trip at both widths, replacing and removing files changes exactly the right lists,
``posted_files`` answers as the (term, file) rows' SQL did, and a layout-9 graph converted in place
answers the same."""
from __future__ import annotations

import random
import re
import sqlite3
from array import array

import numpy as np

from probe_core import Workspace, index_workspace
from probe_core.intel import graph_store, postings
from probe_core.intel.build import ensure_graph
from probe_core.intel.model import FileGraph
from probe_core.intel.store import GRAPH_VERSION, GraphStore
from probe_core.retrieval import literals
from probe_core.retrieval.query_intent import parse_query

from .test_packed_graph import to_layout_9, tree

# what layout 9 asked of its (term, file) rows, frozen here
OLD_POSTED = ("WITH hit(file) AS ({hit}) SELECT g.path, f.file_hash, f.language, f.chunk_kind FROM hit"
              " JOIN graph_files g ON g.id = hit.file JOIN files f ON f.path = g.path AND f.file_hash = g.file_hash"
              " WHERE f.last_error IS NULL AND g.terms IS NOT NULL ORDER BY g.path")



def _lists(db_path) -> dict[int, list[int]]:
    """term id → its file ids, read as the layout says (a width byte, then little-endian ids)."""
    db = sqlite3.connect(db_path)
    try:
        out = {}
        for term, blob in db.execute("SELECT term, files FROM graph_postings"):
            files = array("H" if blob[0] == 2 else "I")
            files.frombytes(blob[1:])
            assert blob[0] in (2, 4) and (blob[0] == 4) == (max(files) > 0xFFFF) and list(files) == sorted(set(files))
            out[term] = list(files)
        return out
    finally:
        db.close()


def test_lists_round_trip_at_both_widths():
    for files in ([], [0], [1, 5, 65535], [1, 65536], [3, 70000, 4_000_000_000]):
        blob = postings.pack(files)
        assert blob[0] == (4 if files and files[-1] > 0xFFFF else 2) and len(blob) == 1 + blob[0] * len(files)
        assert postings.unpack(blob).tolist() == files
    rows = [(7, postings.pack([1, 2, 65535])), (3, postings.pack([9, 70000])), (9, postings.pack([4]))]
    found = np.sort(postings.keys(rows))
    assert [(int(k) >> 32, int(k) & 0xFFFFFFFF) for k in found] == \
        [(3, 9), (3, 70000), (7, 1), (7, 2), (7, 65535), (9, 4)]
    terms, blobs = postings.encode(found)
    assert terms == [3, 7, 9] and blobs == [r[1] for r in sorted(rows)]


def _words(store: GraphStore, db_path) -> dict[bytes, set[str]]:
    """word → the paths posted under it, read from the rows."""
    paths = dict(store._rows("SELECT id, path FROM graph_files"))
    words = dict(store._rows("SELECT id, term FROM graph_terms"))
    return {words[t]: {paths[f] for f in files} for t, files in _lists(db_path).items()}


def test_replacing_and_removing_files_changes_exactly_their_lists(tmp_path):
    db_path = tmp_path / "graph.sqlite"
    store = GraphStore(db_path)

    def put(*files: tuple[str, set[bytes] | None]) -> None:
        store.replace_files([(FileGraph(p, "python", 3), "h", w) for p, w in files])

    try:
        put(("a.py", {b"alpha", b"shared", b"only_a"}), ("b.py", {b"beta", b"shared"}), ("c.py", None))
        expected = {b"alpha": {"a.py"}, b"shared": {"a.py", "b.py"}, b"only_a": {"a.py"}, b"beta": {"b.py"}}
        assert _words(store, db_path) == expected
        # ids past 65,535: the lists of the words such a file holds take 4 bytes an id
        store._db.execute("INSERT INTO graph_files(id, path, file_hash, lines) VALUES(70000, 'far.py', 'h', 1)")
        put(("a.py", {b"alpha", b"shared", b"gamma"}), ("d.py", {b"beta", b"delta"}))
        expected = {b"alpha": {"a.py"}, b"shared": {"a.py", "b.py"}, b"gamma": {"a.py"}, b"beta": {"b.py", "d.py"},
                    b"delta": {"d.py"}}  # only_a: its last file went, so did its row
        assert _words(store, db_path) == expected
        assert {len(b) for (b,) in store._rows("SELECT files FROM graph_postings")} >= {5, 9}  # widths 2 and 4
        store.remove_files(["b.py", "c.py", "missing.py"])
        expected = {b"alpha": {"a.py"}, b"shared": {"a.py"}, b"gamma": {"a.py"}, b"beta": {"d.py"}, b"delta": {"d.py"}}
        assert _words(store, db_path) == expected
        store.queue(FileGraph("a.py", "python", 3), "h2", {b"delta"})  # queued writes go the same way
        store.flush()
        assert _words(store, db_path) == {b"beta": {"d.py"}, b"delta": {"a.py", "d.py"}}
    finally:
        store.close()


def _old_posted(db_path, groups: list[list[int]]) -> list[tuple]:
    """``posted_files`` as layout 9's SQL answered it, over the lists unpacked into (term, file) rows."""
    db = sqlite3.connect(db_path)
    try:
        db.execute("CREATE TEMP TABLE graph_postings (term INTEGER NOT NULL, file INTEGER NOT NULL,"
                   " PRIMARY KEY (term, file)) WITHOUT ROWID")  # shadows the packed table
        db.executemany("INSERT INTO temp.graph_postings VALUES(?,?)",
                       [(t, f) for t, files in _lists(db_path).items() for f in files])
        hit = " INTERSECT ".join(
            f"SELECT DISTINCT file FROM temp.graph_postings WHERE term IN ({','.join('?' * len(g))})" for g in groups)
        return db.execute(OLD_POSTED.format(hit=hit), [t for g in groups for t in g]).fetchall()
    finally:
        db.close()


def _groups(terms: list[int], rng: random.Random) -> list[list[list[int]]]:
    """Groups of term ids as the term index forms them: one word, a few, hundreds, several groups."""
    out = [[[t]] for t in rng.sample(terms, 40)]
    out += [[rng.sample(terms, k)] for k in (2, 5, 30, 150)]
    out += [[rng.sample(terms, 20), rng.sample(terms, 40)] for _ in range(10)]
    out += [[rng.sample(terms, 100), rng.sample(terms, 120), rng.sample(terms, 80)] for _ in range(5)]
    out += [[[max(terms) + 1]], [[terms[0]], [max(terms) + 5]]]  # a term with no list: nothing
    return out


def test_posted_files_answers_as_the_rows_did(tmp_path):
    ws = Workspace.open(tree(tmp_path))
    try:
        index_workspace(ws, dense=False)
        store = graph_store(ws)
        db_path = ws.root / ".probe" / "manifest.sqlite"
        terms = sorted(_lists(db_path))
        assert len(terms) > 200
        hits = 0
        for groups in _groups(terms, random.Random(10)):
            found = store.posted_files(groups)
            assert found == _old_posted(db_path, groups), groups
            hits += bool(found)
        assert hits > 40  # the comparison has teeth
        assert len(store.posted_files([])) == len(store.files())
    finally:
        ws.close()


def _needles(root, rng: random.Random) -> list[str]:
    """Queries from the tree's own text: identifiers, quoted strings, fragments of them."""
    text = "\n".join(p.read_text("utf-8") for p in sorted(root.rglob("*")) if p.is_file() and ".probe" not in p.parts)
    names = sorted(set(re.findall(r"\b[A-Za-z_][A-Za-z0-9_]{3,}\b", text)))
    strings = sorted(set(re.findall(r'"([A-Za-z][^"\\\n]{3,40})"', text)))
    out = [f"where is {n} used" for n in rng.sample(names, 40)] + [f'"{s}"' for s in strings]
    out += [f'"{s[1:-1]}"' for s in strings] + [f'"{s.upper()}"' for s in strings] + ['"no such words here"']
    return out


def _answers(ws: Workspace, groups: list[list[list[int]]]) -> tuple:
    store = graph_store(ws)
    everything = lambda path, language, kind: True  # noqa: E731
    lists = [literals.exact_lists(ws, parse_query(q), everything) for q in _needles(ws.root, random.Random(4))]
    return [store.posted_files(g) for g in groups], [(x.literal, x.identifier) for x in lists]


def test_a_layout_9_graph_is_converted_in_place_and_answers_the_same(tmp_path):
    root = tree(tmp_path)
    db_path = root / ".probe" / "manifest.sqlite"
    ws = Workspace.open(root)
    index_workspace(ws, dense=False)
    groups = _groups(sorted(_lists(db_path)), random.Random(9))
    before, epoch, lists = _answers(ws, groups), graph_store(ws).terms_epoch(), _lists(db_path)
    assert sum(bool(x[0] or x[1]) for x in before[1]) > 30
    ws.close()
    to_layout_9(db_path)

    ws = Workspace.open(root)
    try:
        store = graph_store(ws)
        assert store._rows("SELECT value FROM graph_meta WHERE key='version'")[0][0] == GRAPH_VERSION
        assert store.terms_epoch() == epoch and _lists(db_path) == lists  # converted, not dropped
        assert ensure_graph(ws) == {"updated": 0, "removed": 0}  # nothing graphed again
        assert _answers(ws, groups) == before
    finally:
        ws.close()


def test_a_failed_conversion_of_layout_9_leaves_a_graph_made_again(tmp_path, monkeypatch):
    """A layout-9 graph whose conversion fails (here: packing raises, inside its transaction) is
    dropped, as any older layout is, and graphed again from the files: the answers stay right."""
    from probe_core.intel import migrate_postings

    root = tree(tmp_path)
    db_path = root / ".probe" / "manifest.sqlite"
    ws = Workspace.open(root)
    index_workspace(ws, dense=False)
    groups = _groups(sorted(_lists(db_path)), random.Random(7))
    before = _answers(ws, groups)
    ws.close()
    to_layout_9(db_path)

    def broken(found):
        raise OSError("disk full")

    monkeypatch.setattr(migrate_postings.postings, "encode", broken)
    ws = Workspace.open(root)
    try:
        store = graph_store(ws)
        assert store._rows("SELECT value FROM graph_meta WHERE key='version'")[0][0] == GRAPH_VERSION
        assert store.counts()["files"] == 0  # dropped, not half converted
        monkeypatch.undo()
        assert ensure_graph(ws)["updated"] > 20  # graphed again
        assert _answers(ws, []) == ([], before[1])  # the term ids are new: the literal lists compare
    finally:
        ws.close()
