"""Both VectorStore implementations against their real engines: Qdrant Edge in-process and
qdrant-client's local mode (the server code path)."""
from __future__ import annotations

import uuid

import numpy as np
import pytest

from probe_core import sparse
from probe_core.errors import IndexConfigMismatch, IndexLocked
from probe_core.storage.edge import EdgeStore
from probe_core.storage.protocol import HybridQuery, StoreFilter, StorePoint
from probe_core.storage.qdrant_server import QdrantServerStore

DIM = 8
WS = "ws-1"


def _vec(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=DIM).astype(np.float32)
    return v / np.linalg.norm(v)


DOCS = [
    ("src/auth.py", "python", "code", "def hash_password(password, salt): return pbkdf2(password, salt)"),
    ("src/http.py", "python", "code", "def parseHttpHeader(line): name, value = line.split(':')"),
    ("src/router.go", "go", "code", "func (mx *Mux) Route(pattern string, fn func(r Router)) Router"),
    ("docs/readme.md", "markdown", "doc", "How to install and configure the router"),
    ("tests/test_auth.py", "python", "test", "def test_hash_password(): assert hash_password('a', 'b')"),
]


def _points(with_dense: bool = True) -> list[StorePoint]:
    pts = []
    for k, (path, lang, kind, text) in enumerate(DOCS):
        pts.append(StorePoint(
            id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"{WS}:{path}")),
            sparse=sparse.embed_document(text, 12.0),
            dense=_vec(k) if with_dense else None,
            payload={"workspace_id": WS, "file_path": path, "language": lang, "chunk_kind": kind,
                     "start_line": 1, "end_line": 1, "branch": "main"},
        ))
    return pts


@pytest.fixture(params=["edge", "qdrant-local"])
def store(request, tmp_path):
    if request.param == "edge":
        s = EdgeStore(tmp_path / "shard", "chunks_test")
    else:
        s = QdrantServerStore.connect("local::memory:", "chunks_test")
    s.ensure_collection(DIM)
    yield s
    s.close()


def _query(text: str, dense=None, **flt) -> HybridQuery:
    return HybridQuery(sparse=sparse.embed_query(text), dense=dense, filter=StoreFilter(**flt), limit=10)


def test_sparse_only_points_are_searchable_then_dense_fills_in(store):
    store.upsert(_points(with_dense=False))
    assert store.count() == 5
    assert store.count(with_dense=True) == 0
    hits = store.hybrid_query(_query("hash password"))
    assert hits[0].payload["file_path"] in {"src/auth.py", "tests/test_auth.py"}
    assert hits[0].bm25_rank == 1 and hits[0].dense_rank is None

    ids = [p.id for p in _points()]
    store.set_dense(ids, np.stack([_vec(k) for k in range(5)]))
    assert store.count(with_dense=True) == 5
    # a dense query equal to doc 2's vector ranks it first in the dense list
    hits = store.hybrid_query(_query("Route", dense=_vec(2)))
    assert hits[0].payload["file_path"] == "src/router.go"
    assert hits[0].dense_rank == 1 and hits[0].bm25_rank == 1


def test_code_aware_split_matches_camel_case_parts(store):
    store.upsert(_points())
    hits = store.hybrid_query(_query("http header"))
    assert hits[0].payload["file_path"] == "src/http.py"
    whole = store.hybrid_query(_query("parseHttpHeader"))
    assert whole[0].payload["file_path"] == "src/http.py"


def test_filters(store):
    store.upsert(_points())
    hits = store.hybrid_query(_query("hash password router", languages=["go"]))
    assert {h.payload["language"] for h in hits} == {"go"}
    hits = store.hybrid_query(_query("hash password", chunk_kinds=["test"]))
    assert [h.payload["file_path"] for h in hits] == ["tests/test_auth.py"]
    hits = store.hybrid_query(_query("hash password router install", file_paths=["docs/readme.md"]))
    assert [h.payload["file_path"] for h in hits] == ["docs/readme.md"]
    assert store.hybrid_query(_query("hash", file_paths=[])) == []
    assert store.hybrid_query(_query("hash", workspace_id="other")) == []


def test_delete_by_file_and_ids(store):
    pts = _points()
    store.upsert(pts)
    store.delete_file(WS, "src/auth.py")
    assert store.count() == 4
    assert "src/auth.py" not in set(store.all_ids().values())
    store.delete_ids([pts[1].id])
    assert store.count() == 3
    assert set(store.all_ids()) == {p.id for p in pts[2:]}


def test_upsert_is_idempotent(store):
    store.upsert(_points())
    store.upsert(_points())
    assert store.count() == 5


def test_set_payload_by_filter_keeps_vectors(store):
    store.upsert(_points())
    dense = store.count(with_dense=True)
    store.set_payload(StoreFilter(workspace_id=WS), {"project_id": "aaaaaaaaaaaa"})
    assert store.count(StoreFilter(project_id="aaaaaaaaaaaa")) == len(DOCS)
    if isinstance(store, EdgeStore):  # one project id for the whole shard (``edge_payload.ShardIds``)
        with pytest.raises(ValueError, match="one workspace and project id"):
            store.set_payload(StoreFilter(workspace_id=WS, languages=["go"]), {"project_id": "bbbbbbbbbbbb"})
        store.set_payload(StoreFilter(workspace_id=WS, languages=["go"]), {"branch": ["bbb"]})
        assert store.count(StoreFilter(branch="bbb")) == 1
    else:
        store.set_payload(StoreFilter(workspace_id=WS, languages=["go"]), {"project_id": "bbbbbbbbbbbb"})
        assert store.count(StoreFilter(project_id="bbbbbbbbbbbb")) == 1
        assert store.count(StoreFilter(project_id="aaaaaaaaaaaa")) == len(DOCS) - 1
    assert store.count(with_dense=True) == dense
    hits = store.hybrid_query(_query("hash password", project_id="aaaaaaaaaaaa"))
    assert hits and all(h.payload["project_id"] == "aaaaaaaaaaaa" for h in hits)
    assert all(h.payload["file_path"] for h in hits)  # merged, not overwritten
    with pytest.raises(ValueError):
        store.set_payload(StoreFilter(), {"project_id": "x"})


def test_branch_lists_by_id_and_dense_vectors_read_back(store):
    """Branch tags are lists set by id (Qdrant matches a keyword against any element); dense
    vectors come back by id for reuse, points without one are left out."""
    pts = _points()
    store.upsert(pts)
    store.set_payload_ids([pts[0].id, pts[1].id], {"branch": ["feature", "main"]})
    store.set_payload_ids([pts[2].id], {"branch": ["feature"]})
    assert store.count(StoreFilter(branch="main")) == len(DOCS) - 1
    assert store.count(StoreFilter(branch="feature")) == 3
    hits = store.hybrid_query(_query("hash password router", branch="feature"))
    assert {h.id for h in hits} <= {pts[0].id, pts[1].id, pts[2].id}
    vecs = store.dense_vectors([pts[0].id, pts[3].id])
    assert set(vecs) == {pts[0].id, pts[3].id}
    # to float16's precision: Qdrant Edge stores vectors as float16 (storage/edge.py)
    assert np.allclose(vecs[pts[3].id], _vec(3) / np.linalg.norm(_vec(3)), atol=1e-3)
    store.upsert([StorePoint(id=str(uuid.uuid4()), sparse=sparse.embed_document("x", 5.0), payload={})])
    lexical_only = [i for i in store.all_ids() if i not in {p.id for p in pts}]
    assert store.dense_vectors(lexical_only) == {}


def test_wrong_dimension_is_a_clear_error(tmp_path):
    s = QdrantServerStore.connect("local::memory:", "c")
    s.ensure_collection(DIM)
    with pytest.raises(IndexConfigMismatch, match="8-d"):
        s.ensure_collection(16)


def test_edge_store_survives_reopen(tmp_path):
    s = EdgeStore(tmp_path / "shard", "c")
    s.ensure_collection(DIM)
    s.upsert(_points())
    s.close()
    s2 = EdgeStore(tmp_path / "shard", "c")
    assert s2.count() == 5
    s2.close()


def test_edge_second_owner_gets_index_locked(tmp_path):
    s = EdgeStore(tmp_path / "shard", "c")
    s.ensure_collection(DIM)
    other = EdgeStore(tmp_path / "shard", "c")
    with pytest.raises(IndexLocked, match="another Probe process"):
        other.count()
    s.close()


def test_a_new_edge_shard_is_compact_and_an_older_one_still_loads(tmp_path):
    """A new shard stores dense vectors as float16, payloads under short keys without what is one
    value for the whole shard (workspace and project ids, kept once beside it; ``repo_id``) or read
    by nothing (``indexed_at``), and indexes only the fields queries filter on; callers see the
    protocol's names. A shard made before (float32, long keys, every index) keeps its layout and
    still answers, filters and reconciles."""
    import json

    import qdrant_edge as qe

    from probe_core.storage.protocol import DENSE, KEYWORD_FIELDS, SPARSE

    def check(store: EdgeStore) -> None:
        pts = _points()
        for p in pts:
            p.payload["repo_id"] = p.payload["workspace_id"] = "ws-1"
        store.upsert(pts)
        store.set_payload_ids([pts[0].id], {"branch": ["feature"]})
        hits = store.hybrid_query(_query("hash password", workspace_id="ws-1"))
        assert hits and all(h.payload["repo_id"] == "ws-1" and h.payload["file_path"] for h in hits)
        assert {h.payload["file_path"] for h in store.hybrid_query(_query("hash", file_paths=["src/auth.py"]))} \
            == {"src/auth.py"}
        assert store.count(StoreFilter(branch="feature")) == 1
        assert set(store.all_ids().values()) == {p.payload["file_path"] for p in pts}
        store.delete_file("ws-1", "src/auth.py")
        assert "src/auth.py" not in set(store.all_ids().values())

    new = EdgeStore(tmp_path / "new", "t")
    new.ensure_collection(DIM)
    check(new)
    new.close()
    (seg,) = (tmp_path / "new" / "segments").iterdir()
    assert json.loads((seg / "segment.json").read_text())["config"]["vector_data"][DENSE]["datatype"] == "float16"
    shard = qe.EdgeShard.load(str(tmp_path / "new"))
    assert set(shard.info().payload_schema) == {"f", "l", "k", "b"}
    (stored, *_), _ = shard.scroll(qe.ScrollRequest(limit=1, with_payload=True, with_vector=False))
    assert "f" in stored.payload and "file_path" not in stored.payload
    assert not {"repo_id", "w", "j", "i", "workspace_id"} & set(stored.payload)
    shard.close()

    old = qe.EdgeShard.create(str(tmp_path / "old"), qe.EdgeConfig(
        vectors={DENSE: qe.EdgeVectorParams(size=DIM, distance=qe.Distance.Cosine)},
        sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)}))
    for field in KEYWORD_FIELDS:
        old.update(qe.UpdateOperation.create_field_index(field, qe.PayloadSchemaType.Keyword))
    old.close()
    store = EdgeStore(tmp_path / "old", "t")
    store.ensure_collection(DIM)
    check(store)
    pts = _points()
    store.upsert(pts)
    assert np.allclose(store.dense_vectors([pts[3].id])[pts[3].id], _vec(3) / np.linalg.norm(_vec(3)), atol=1e-6)
    store.close()
    shard = qe.EdgeShard.load(str(tmp_path / "old"))
    (stored, *_), _ = shard.scroll(qe.ScrollRequest(limit=1, with_payload=True, with_vector=False))
    assert "file_path" in stored.payload and "f" not in stored.payload
    shard.close()


def test_a_lean_edge_shard_keeps_its_workspace_and_project_ids_once(tmp_path):
    """A new shard's points carry no workspace or project id: the shard keeps them once, so payloads
    read back, filters on them and re-keying a project (``memory/identity.py``) behave as if each
    point had them, across a reopen. A short-key shard made before the lean layout (it has a
    ``workspace_id`` index, "w") keeps storing the ids on its points."""
    import qdrant_edge as qe

    from probe_core.storage.edge_payload import PayloadKeys
    from probe_core.storage.protocol import DENSE, SPARSE

    lean = EdgeStore(tmp_path / "lean", "t")
    lean.ensure_collection(DIM)
    pts = _points()
    for p in pts:
        p.payload["project_id"] = "proj-a"
    lean.upsert(pts)
    assert lean.count(StoreFilter(workspace_id=WS)) == 5 and lean.count(StoreFilter(workspace_id="other")) == 0
    lean.set_payload(StoreFilter(workspace_id=WS), {"project_id": "proj-b"})
    lean.close()
    lean = EdgeStore(tmp_path / "lean", "t")
    assert lean.count(StoreFilter(project_id="proj-b")) == 5 and lean.count(StoreFilter(project_id="proj-a")) == 0
    hits = lean.hybrid_query(_query("hash password", workspace_id=WS, project_id="proj-b"))
    assert hits and all(h.payload["workspace_id"] == h.payload["repo_id"] == WS for h in hits)
    assert all(h.payload["project_id"] == "proj-b" for h in hits)
    lean.delete_workspace("other")
    assert lean.count() == 5
    lean.delete_workspace(WS)
    assert lean.count() == 0
    lean.upsert(_points())
    renamed = _points()[:1]  # the workspace given a new id under the same .probe/: it takes the points over
    renamed[0].payload["workspace_id"] = "ws-new"
    lean.upsert(renamed)
    assert lean.count(StoreFilter(workspace_id="ws-new")) == 5 and lean.count(StoreFilter(workspace_id=WS)) == 0
    lean.close()

    old = qe.EdgeShard.create(str(tmp_path / "short"), qe.EdgeConfig(
        vectors={DENSE: qe.EdgeVectorParams(size=DIM, distance=qe.Distance.Cosine)},
        sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)}))
    for field in ("workspace_id", "file_path", "language", "chunk_kind", "branch"):
        old.update(qe.UpdateOperation.create_field_index(PayloadKeys.SHORT.field(field), qe.PayloadSchemaType.Keyword))
    old.close()
    short = EdgeStore(tmp_path / "short", "t")
    short.upsert(_points())
    assert short.count(StoreFilter(workspace_id=WS)) == 5 and short.count(StoreFilter(workspace_id="other")) == 0
    short.close()
    shard = qe.EdgeShard.load(str(tmp_path / "short"))
    (stored, *_), _ = shard.scroll(qe.ScrollRequest(limit=1, with_payload=True, with_vector=False))
    assert stored.payload["w"] == WS
    shard.close()
