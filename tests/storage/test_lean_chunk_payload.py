"""A chunk's point id carries its file's version, and a new Edge shard stores neither that version
nor the chunk hash nor empty fields in the chunk's payload; every reader still sees them.
A real Qdrant Edge shard and a real index (``docs/benchmarks.md``, "A compact index, round 7")."""
from __future__ import annotations

import random
import sqlite3
import uuid

import qdrant_edge as qe

from probe_core import Workspace, index_workspace, search, sparse
from probe_core.intel.build import graph_store
from probe_core.records import file_hash_of, point_id, short_hash
from probe_core.storage.edge import EdgeStore
from probe_core.storage.protocol import HybridQuery, StoreFilter, StorePoint


def test_a_point_id_carries_the_file_version_and_stays_unique():
    rng = random.Random(7)
    versions = [f"{rng.getrandbits(64):016x}" for _ in range(200)]
    ids = set()
    for version in versions:
        for start in range(1, 50, 7):
            pid = point_id("ws", "pkg/a.py", start, start + 5, version)
            assert uuid.UUID(pid).version == 8 and file_hash_of(pid) == version
            ids.add(pid)
    assert len(ids) == 200 * 7
    assert point_id("ws", "pkg/a.py", 1, 5, versions[0]) != point_id("ws", "pkg/b.py", 1, 5, versions[0])
    assert point_id("ws", "pkg/a.py", 1, 5, versions[0]) != point_id("other", "pkg/a.py", 1, 5, versions[0])
    # no version, or not a short hash: a UUIDv5 that carries none
    for odd in ("", "abc", "g" * 16):
        pid = point_id("ws", "pkg/a.py", 1, 5, odd)
        assert uuid.UUID(pid).version == 5 and file_hash_of(pid) is None
    assert file_hash_of("not an id") is None


def _chunk(path: str, start: int, version: str, **extra) -> StorePoint:
    payload = {"workspace_id": "ws", "project_id": "pj", "branch": ["main"], "file_path": path,
               "file_hash": version, "chunk_hash": short_hash(f"{path}{start}"), "start_line": start,
               "end_line": start + 3, "language": "python", "chunk_kind": "code", "symbol": None,
               "symbol_kind": None, "parent_symbol": None, "is_fragment": False, **extra}
    return StorePoint(id=point_id("ws", path, start, start + 3, version), sparse=sparse.embed_document("parse header", 4.0),
                      payload=payload)


def test_a_lean_shard_stores_less_and_gives_every_field_back(tmp_path):
    version = short_hash("version one")
    plain = _chunk("src/a.py", 1, version)
    named = _chunk("src/a.py", 9, version, symbol="parse", symbol_kind="method", parent_symbol="Reader",
                   is_fragment=True)
    old_style = _chunk("src/b.py", 1, version)
    old_style.id = str(uuid.uuid5(uuid.NAMESPACE_URL, "made before"))  # an id without the version
    store = EdgeStore(tmp_path / "shard", "chunks_test")
    store.ensure_collection(8)
    store.upsert([plain, named, old_style])
    hits = {h.id: h for h in store.hybrid_query(HybridQuery(sparse=sparse.embed_query("parse header"), dense=None,
                                                            filter=StoreFilter(workspace_id="ws"), limit=10))}
    for point in (plain, named, old_style):
        expected = {**point.payload, "repo_id": "ws"}
        if point is not old_style:
            del expected["chunk_hash"]  # the manifest keeps it (search reads it there)
        assert hits[point.id].payload == expected
    path = store.path
    store.close()

    shard = qe.EdgeShard.load(str(path))
    try:
        stored = {str(p.id): p.payload for p in shard.retrieve([uuid.UUID(x.id) for x in (plain, named, old_style)],
                                                              True, False)}
    finally:
        shard.close()
    assert set(stored[plain.id]) == {"b", "f", "s", "e", "l", "k"}  # no version, hash or empty field
    assert set(stored[named.id]) == {"b", "f", "s", "e", "l", "k", "y", "t", "a", "x"}
    assert stored[old_style.id]["h"] == version and "c" in stored[old_style.id]


def test_a_search_still_tells_a_stale_range_from_the_manifest_hashes(tmp_path):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "cookies.py").write_text("def parse_cookie_header(value):\n    return value.split(';')\n")
    (root / "pkg" / "other.py").write_text("def unrelated():\n    return 1\n")
    ws = Workspace.open(root)
    try:
        index_workspace(ws)
        hit = search(ws, "parse_cookie_header", top_k=3).results[0]
        assert hit.path == "pkg/cookies.py" and hit.stale is False
        (root / "pkg" / "cookies.py").write_text("def parse_cookie_header(value):\n    return value.split(',')\n")
        hit = search(ws, "parse_cookie_header", top_k=3).results[0]
        assert hit.path == "pkg/cookies.py" and hit.stale is True
    finally:
        ws.close()


def test_whole_indexes_made_before_become_partial(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("class Reader:\n    def parse(self):\n        return 1\n\ndef top():\n    return 2\n")
    ws = Workspace.open(root)
    index_workspace(ws)
    counts = ws.manifest.counts()
    db_path = ws.probe_dir / "manifest.sqlite"
    ws.close()
    db = sqlite3.connect(db_path, isolation_level=None)
    for name, table, column in (("chunks_dense", "chunks", "has_dense"), ("graph_symbols_parent", "graph_symbols", "parent")):
        db.execute(f"DROP INDEX {name}")
        db.execute(f"CREATE INDEX {name} ON {table}({column})")  # as versions before made them
    db.close()

    ws = Workspace.open(root)
    try:
        graph_store(ws)  # opens the graph
        assert ws.manifest.counts() == counts
    finally:
        ws.close()
    db = sqlite3.connect(db_path)
    sql = dict(db.execute("SELECT name, sql FROM sqlite_master WHERE name IN ('chunks_dense', 'graph_symbols_parent')"))
    db.close()
    assert sql["chunks_dense"].endswith("WHERE has_dense=0")
    assert sql["graph_symbols_parent"].endswith("WHERE parent IS NOT NULL")
