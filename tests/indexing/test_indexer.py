"""The indexer against the real engines: Qdrant Edge, the packaged ONNX model, real grammars."""
from __future__ import annotations

import hashlib

import json

import numpy as np
import pytest

from probe_core import Workspace, index_status, index_workspace, search
from probe_core.chunking import chunk_file
from probe_core.errors import IndexConfigMismatch
from probe_core.indexing.indexer import fill_dense
from probe_core.scan import read_text, scan_files
from probe_core.workspace import point_id


def expected_ids(ws: Workspace) -> set[str]:
    """The exact point ids a correct index of the tree holds, computed independently."""
    out = set()
    for f in scan_files(ws.root).files:
        text = read_text(ws.root, f.path)
        version = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        for c in chunk_file(f.path, text):
            out.add(point_id(ws.workspace_id, f.path, c.start_line, c.end_line, version))
    return out


def assert_exact(ws: Workspace) -> None:
    store_ids = set(ws.store.all_ids())
    assert store_ids == set(ws.manifest.chunk_ids())
    assert store_ids == expected_ids(ws)


def test_first_index_writes_config_its_own_gitignore_and_points(repo):
    ws = Workspace.open(repo)
    report = index_workspace(ws)
    cfg = json.loads((repo / ".probe" / "config.json").read_text())
    assert cfg["preset"] == "embedded" and len(cfg["workspace_id"]) == 36
    assert (repo / ".probe" / ".gitignore").read_text().splitlines()[-1] == "*"
    assert not (repo / ".gitignore").exists()  # nothing written outside .probe/
    assert report.files_indexed == 6  # the six files
    assert report.generation == 1
    assert report.chunks_embedded == report.chunks_indexed > 0
    assert_exact(ws)
    st = index_status(ws)
    assert st["dense_coverage"] == 1.0 and st["backend_reachable"] is True
    assert st["embedding_dimensions"] == 384
    ws.close()


def test_incremental_change_delete_and_generation(repo):
    ws = Workspace.open(repo)
    index_workspace(ws)
    scanned_at = ws.manifest.get_meta("last_scan_at")
    again = index_workspace(ws)
    # a scan that changed nothing keeps the generation (it keys caches), and records that it ran
    assert again.files_indexed == 0 and again.files_unchanged == 6 and again.generation == 1
    assert ws.manifest.generation == 1 and ws.manifest.get_meta("last_scan_at") != scanned_at

    (repo / "src/http/headers.py").write_text("def parse_cookie(header):\n    return header.split(';')\n")
    (repo / "router/mux.go").unlink()
    rep = index_workspace(ws)
    assert rep.files_indexed == 1 and rep.files_deleted == 1 and rep.generation == 2
    assert_exact(ws)
    paths = {r.path for r in search(ws, "parse cookie header", top_k=5).results}
    assert "src/http/headers.py" in paths
    assert all(r.path != "router/mux.go" for r in search(ws, "ServeHTTP Mux routes", top_k=10).results)
    ws.close()


def test_touch_without_change_is_not_reembedded(repo):
    ws = Workspace.open(repo)
    index_workspace(ws)
    p = repo / "docs/guide.md"
    p.write_text(p.read_text())  # new mtime, same bytes
    rep = index_workspace(ws)
    assert rep.files_indexed == 0 and rep.chunks_embedded == 0
    ws.close()


def test_lexical_first_then_dense(repo):
    ws = Workspace.open(repo)
    rep = index_workspace(ws, dense=False)
    assert rep.chunks_embedded == 0
    resp = search(ws, "hash_password", top_k=3)
    assert resp.results[0].path in {"src/auth/passwords.py", "tests/test_passwords.py"}
    assert resp.status == "uncertain" and "dense" in resp.message and resp.dense_coverage == 0.0
    assert resp.results[0].signals["dense_rank"] is None
    n = fill_dense(ws)
    assert n == ws.manifest.counts()["chunks"]
    resp = search(ws, "hash_password", top_k=3)
    assert resp.status == "healthy" and resp.dense_coverage == 1.0
    assert resp.results[0].signals["dense_rank"] is not None
    ws.close()


def test_bad_inputs_are_skipped_not_fatal(repo, tmp_path):
    (repo / "blob_data").write_bytes(b"\x00\x01\x02" * 100)
    (repo / "latin1.py").write_bytes(b"name = 'caf\xe9'\ndef f():\n    return '\xff\xfe'\n")
    (repo / "huge.txt").write_text("x" * (5 * 1024 * 1024))
    outside = tmp_path / "secret.txt"
    outside.write_text("top secret")
    (repo / "link_out.txt").symlink_to(outside)
    ws = Workspace.open(repo)
    rep = index_workspace(ws)
    indexed = set(ws.manifest.file_paths())
    assert "latin1.py" in indexed
    assert not {"blob_data", "huge.txt", "link_out.txt"} & indexed
    assert rep.files_skipped >= 3
    assert_exact(ws)
    hits = search(ws, "secret", top_k=5).results
    assert all(h.path != "link_out.txt" for h in hits)
    ws.close()


def test_empty_repo(tmp_path):
    root = tmp_path / "empty"
    root.mkdir()
    ws = Workspace.open(root)
    rep = index_workspace(ws)
    assert rep.files_indexed == 0 and rep.generation == 1
    resp = search(ws, "anything")
    assert resp.results == [] and resp.status == "uncertain"
    ws.close()


def test_file_deleted_during_scan(repo):
    ws = Workspace.open(repo)
    victim = repo / "src/http/headers.py"

    def delete_once(progress):
        if progress.phase == "scanning" and victim.exists():
            victim.unlink()

    # scanning is reported before the walk; delete after the walk by hooking "chunking" instead
    def delete_after_walk(progress):
        if progress.phase == "chunking" and victim.exists():
            victim.unlink()

    rep = index_workspace(ws, progress=delete_after_walk)
    assert "src/http/headers.py" not in ws.manifest.file_paths()
    assert any(p == "src/http/headers.py" for p, _ in rep.errors)
    rep2 = index_workspace(ws)
    assert rep2.files_indexed == 0
    assert_exact(ws)
    del delete_once
    ws.close()


def test_stale_snippet_flagged(repo):
    ws = Workspace.open(repo)
    index_workspace(ws)
    first = search(ws, "check_password stored salted hash", top_k=3).results[0]
    assert first.stale is False
    p = repo / first.path
    lines = p.read_text().splitlines()
    lines[first.start_line - 1] += "  # edited"
    p.write_text("\n".join(lines) + "\n")
    ws.touch()
    again = search(ws, "check_password stored salted hash", top_k=3).results
    hit = next(r for r in again if r.path == first.path)
    assert hit.stale is True
    ws.close()


def test_model_mismatch_is_a_clear_error(repo):
    ws = Workspace.open(repo)
    index_workspace(ws)
    ws.manifest.set_meta("embedding_model_id", "some/other-model")
    with pytest.raises(IndexConfigMismatch, match="probe index --rebuild"):
        search(ws, "password")
    st = index_status(ws)
    assert st["index_config_mismatch"] is True
    ws.close()


def test_qdrant_server_code_path_local_mode(repo, tmp_path, monkeypatch):
    monkeypatch.setenv("QDRANT_URL", f"local:{tmp_path / 'qdrant-local'}")
    ws = Workspace.open(repo)
    index_workspace(ws)
    assert_exact(ws)
    top = search(ws, "dispatch request to the registered handler", top_k=3).results
    assert top[0].path == "router/mux.go"
    ws.close()


def test_an_edit_re_embeds_only_the_chunks_it_changed(tmp_path):
    """Identical chunks (same text, symbol and parent) keep their dense vectors across versions,
    even when the edit moves them to other lines."""
    root = tmp_path / "r"
    root.mkdir()
    body = {name: f"def {name}(items):\n    \"\"\"Return the {name} of the items.\"\"\"\n    return sorted(items)[{n}]\n"
            for n, name in enumerate(["alpha", "beta", "gamma"])}
    (root / "mod.py").write_text("import os\n\n\n" + "\n\n".join(body.values()))
    ws = Workspace.open(root)
    index_workspace(ws)
    before = {c.symbol: c.point_id for c in ws.manifest.chunks_for("mod.py")}
    old_vectors = ws.store.dense_vectors(list(before.values()))
    assert set(old_vectors) == set(before.values())

    edited = dict(body, beta=body["beta"].replace("sorted(items)", "sorted(items, reverse=True)"))
    (root / "mod.py").write_text("import os\n\n# a comment that moves every function down\n\n\n"
                                 + "\n\n".join(edited.values()) + "\n\ndef delta(items):\n    return items\n")
    rep = index_workspace(ws, dense=False)
    after = {c.symbol: c.point_id for c in ws.manifest.chunks_for("mod.py")}
    queued = {pid for pid, _, _ in ws.manifest.pending_dense(100)}
    assert {s for s, pid in after.items() if pid in queued} >= {"beta", "delta"}
    assert {"alpha", "gamma"}.isdisjoint({s for s, pid in after.items() if pid in queued})
    assert rep.chunks_reused >= 2 and after["alpha"] != before["alpha"]  # new lines, new point, same vector
    reused = ws.store.dense_vectors([after["alpha"], after["gamma"]])
    assert np.allclose(reused[after["alpha"]], old_vectors[before["alpha"]])
    assert np.allclose(reused[after["gamma"]], old_vectors[before["gamma"]])
    fill_dense(ws)
    assert ws.store.count(with_dense=True) == ws.manifest.counts()["chunks"] == ws.store.count()
    assert search(ws, "sorted in reverse order", top_k=3).results[0].symbol == "beta"
    assert_exact(ws)
    ws.close()


@pytest.mark.parametrize("server", [False, True], ids=["edge", "qdrant-local"])
def test_a_lost_store_is_detected_and_rebuilt(repo, tmp_path, monkeypatch, server):
    """`.probe/store/` deleted (or a server collection dropped) behind Probe's back: the manifest still
    lists every file. Status and search say what to run; the next index run rebuilds exactly the
    points the files call for instead of reporting every file unchanged."""
    import shutil

    from probe_core.engine.answers import search_answer

    if server:
        monkeypatch.setenv("QDRANT_URL", f"local:{tmp_path / 'qdrant'}")
    ws = Workspace.open(repo)
    index_workspace(ws)
    ws.close()
    if server:
        shutil.rmtree(tmp_path / "qdrant")
    else:
        shutil.rmtree(repo / ".probe" / "store")
    ws = Workspace.open(repo)
    ws.store.ensure_collection(384)  # what the old indexer did first: a new, empty store

    st = index_status(ws)
    assert st["points_in_store"] == 0 and st["store_missing_points"] == st["chunks_indexed"] > 0
    assert "probe index" in st["last_error"]
    answer = search_answer(ws, "hash a password with a salt", top_k=3)
    assert answer["results"] == [] and answer["status"] == "degraded" and "probe index" in answer["message"]

    rep = index_workspace(ws)
    assert rep.reconciled["cause"] == "points missing from the store" and rep.reconciled["files_redone"] == 6
    assert rep.files_indexed == 6 and rep.files_unchanged == 0
    if not server:
        assert_exact(ws)
    assert "store_missing_points" not in index_status(ws)
    answer = search_answer(ws, "hash a password with a salt", top_k=3)
    assert answer["status"] == "healthy" and answer["results"][0]["path"] == "src/auth/passwords.py"
    ws.close()
