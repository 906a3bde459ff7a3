"""Dense vectors in 8 bits (``storage/edge.py`` ``vector_datatype``, issue 18 item 4): with
``PROBE_DENSE_STORAGE=turbo8`` a new Qdrant Edge shard stores Turbo8, half of float16; by default it
stores float16 (Turbo8 cost the dev set 0.008 MRR@10). Either way a shard keeps the datatype it was
made with, its vectors and its answers (its own config decides, read at load)."""
from __future__ import annotations

import json
import uuid

import numpy as np

from probe_core import sparse
from probe_core.storage.edge import EdgeStore
from probe_core.storage.protocol import DENSE, HybridQuery, StorePoint

DIM = 384  # MiniLM's: the size whose precision matters
N = 300


def _vectors(seed: int, n: int) -> np.ndarray:
    """Clustered unit vectors (a shared direction plus noise), nearer to real embeddings than
    isotropic noise: every similarity is positive and the gaps between neighbours are small."""
    rng = np.random.default_rng(seed)
    v = 0.5 * rng.standard_normal(DIM) + rng.standard_normal((n, DIM))
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def _points(vectors: np.ndarray, start: int = 0) -> list[StorePoint]:
    return [StorePoint(id=str(uuid.UUID(int=start + k + 1)), sparse=sparse.embed_document(f"doc{k} text", 5.0),
                       dense=v, payload={"file_path": f"f{start + k}.py", "language": "python",
                                         "chunk_kind": "code", "workspace_id": "ws", "project_id": "p"})
            for k, v in enumerate(vectors)]


def _datatypes(shard_dir) -> set[str]:
    return {json.loads((seg / "segment.json").read_text())["config"]["vector_data"][DENSE]["datatype"]
            for seg in (shard_dir / "segments").iterdir()}


def _dense_top(store: EdgeStore, q: np.ndarray) -> list[str]:
    hits = store.hybrid_query(HybridQuery(dense=q, sparse=sparse.embed_query("zzz"), limit=200,
                                          prefetch_limit=10))
    return [h.id for h in sorted((h for h in hits if h.dense_rank), key=lambda h: h.dense_rank)]


def test_a_new_shard_stores_dense_vectors_in_8_bits_when_asked_and_keeps_the_nearest(tmp_path, monkeypatch):
    monkeypatch.setenv("PROBE_DENSE_STORAGE", "turbo8")
    vecs = _vectors(0, N)
    store = EdgeStore(tmp_path / "new", "t")
    store.ensure_collection(DIM)
    pts = _points(vecs)
    store.upsert(pts)
    back = store.dense_vectors([p.id for p in pts])
    err = max(float(np.abs(back[p.id] - v).max()) for p, v in zip(pts, vecs))
    assert 1e-4 < err < 5e-3  # 8 bits a dimension: coarser than float16, still close
    for k in range(0, N, 30):  # a point's own vector: itself first, as the float vectors rank it
        exact = [pts[i].id for i in np.argsort(-(vecs @ vecs[k]))[:10]]
        got = _dense_top(store, vecs[k])
        assert got[0] == pts[k].id and len(set(got) & set(exact)) >= 8
    store.close()
    assert _datatypes(tmp_path / "new") == {"turbo8"}


def test_a_float16_shard_made_before_keeps_its_datatype_and_answers(tmp_path, monkeypatch):
    vecs = _vectors(1, N)
    old = EdgeStore(tmp_path / "old", "t")  # the default
    old.ensure_collection(DIM)
    old.upsert(_points(vecs[:200]))
    old.close()
    assert _datatypes(tmp_path / "old") == {"float16"}
    monkeypatch.setenv("PROBE_DENSE_STORAGE", "turbo8")

    store = EdgeStore(tmp_path / "old", "t")
    store.upsert(_points(vecs[200:], start=200))  # written after the upgrade: the shard's own datatype
    pts = _points(vecs)
    back = store.dense_vectors([p.id for p in pts])
    assert len(back) == N
    assert max(float(np.abs(back[p.id] - v).max()) for p, v in zip(pts, vecs)) < 2e-4  # float16's precision
    for k in (0, 150, 250):
        exact = [pts[i].id for i in np.argsort(-(vecs @ vecs[k]))[:10]]
        assert _dense_top(store, vecs[k])[:10] == exact
    store.close()
    assert _datatypes(tmp_path / "old") == {"float16"}


def test_a_turbo8_shard_stays_turbo8_without_the_setting_and_a_bad_setting_is_one_clear_error(tmp_path, monkeypatch):
    import pytest

    from probe_core.errors import ConfigError

    vecs = _vectors(2, 50)
    monkeypatch.setenv("PROBE_DENSE_STORAGE", "turbo8")
    store = EdgeStore(tmp_path / "t8", "t")
    store.ensure_collection(DIM)
    store.upsert(_points(vecs[:25]))
    store.close()
    monkeypatch.delenv("PROBE_DENSE_STORAGE")
    store = EdgeStore(tmp_path / "t8", "t")
    store.upsert(_points(vecs[25:], start=25))
    assert len(store.dense_vectors([p.id for p in _points(vecs)])) == 50
    store.close()
    assert _datatypes(tmp_path / "t8") == {"turbo8"}
    monkeypatch.setenv("PROBE_DENSE_STORAGE", "int4")
    with pytest.raises(ConfigError, match="PROBE_DENSE_STORAGE must be one of float16, turbo8"):
        EdgeStore(tmp_path / "bad", "t").ensure_collection(DIM)


def test_a_bad_setting_is_refused_before_any_verb_touches_the_index(tmp_path):
    """``probe index --rebuild`` deletes the index before the store is made again: the setting is
    checked with the rest of the configuration, first, so a typo costs nothing."""
    import subprocess
    import sys

    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PROBE_DATA_DIR": str(tmp_path / "data")}
    probe = [sys.executable, "-m", "probe_cli"]
    subprocess.run([*probe, "index", "--lexical-only", "--quiet", "--root", str(tmp_path)], env=env, check=True)
    shard = next((tmp_path / ".probe" / "store").iterdir())
    made = (shard / "segments").stat().st_mtime_ns
    out = subprocess.run([*probe, "index", "--rebuild", "--lexical-only", "--root", str(tmp_path)],
                         env={**env, "PROBE_DENSE_STORAGE": "int4"}, capture_output=True, text=True)
    assert out.returncode == 1 and "PROBE_DENSE_STORAGE must be one of float16, turbo8" in out.stderr
    assert (shard / "segments").stat().st_mtime_ns == made and _datatypes(shard) == {"float16"}
