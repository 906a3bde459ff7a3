"""The workspace registry and `probe prune`, on real workspaces: real Qdrant Edge shards, real
manifests, the real engine lock, and qdrant-client's local mode for the server path."""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from probe_core import Workspace, index_workspace, search
from probe_core.engine.lock import EngineLock
from probe_core.registry import (
    SERVER_COLLECTION,
    SERVER_MIN_AGE_S,
    Registry,
    RegistryError,
    WorkspaceRecord,
    list_workspaces,
    note_seen,
    parse_duration,
    prune,
    record_workspace,
    render_prune,
    server_records,
    server_upsert,
    stale_workspaces,
)
from probe_core.sparse import SparseVec
from probe_core.storage.protocol import StoreFilter, StorePoint

DAY = 86400.0
NOW = 1_900_000_000.0  # a fixed "now" for the stale arithmetic


REPO_FILES = {
    "src/auth/passwords.py": '''"""Password hashing."""
import hashlib
import os


def hash_password(password: str, salt: bytes | None = None) -> str:
    """Hash a password with a random salt using PBKDF2."""
    salt = salt or os.urandom(16)
    return salt.hex() + "$" + hashlib.pbkdf2_hmac("sha256", password.encode(), salt, 600_000).hex()
''',
    "router/mux.go": "package router\n\n// Mux routes requests to handlers by path.\ntype Mux struct{}\n",
    "docs/guide.md": "# Guide\n\n## Throttling\n\nLimit concurrent requests with a semaphore.\n",
}


def make_repo(base: Path, name: str) -> Path:
    root = base / name
    for rel, text in REPO_FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, "utf-8")
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    return root


def indexed(root: Path, *, seen_at: float) -> str:
    """Index ``root`` lexically, record it as seen at ``seen_at``; returns its workspace id."""
    ws = Workspace.open(root)
    try:
        report = index_workspace(ws, dense=False)
        assert report.files_indexed > 0
        record_workspace(ws, now=seen_at)
        return ws.workspace_id
    finally:
        ws.close()


def tree(root: Path) -> dict[str, int]:
    """Every file under ``root`` → its size (what prune may or may not have touched)."""
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            p = Path(dirpath) / f
            out[str(p.relative_to(root))] = p.lstat().st_size
    return out


# -- durations -------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, seconds", [("30d", 30 * DAY), ("12h", 12 * 3600), ("2w", 14 * DAY),
                                           ("90m", 5400), ("0d", 0), ("45s", 45), ("1.5d", 1.5 * DAY),
                                           (" 7D ", 7 * DAY)])
def test_parse_duration(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "30", "d", "30x", "-1d", "thirty days", "1d2h", "30 days"])
def test_parse_duration_rejects(text):
    with pytest.raises(RegistryError, match="invalid duration"):
        parse_duration(text)


def test_cli_bad_duration_is_one_line_exit_2(capsys):
    from probe_cli.main import main

    assert main(["prune", "--older-than", "30x"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "invalid duration '30x'" in err and err.startswith("probe: error:")


# -- the registry ----------------------------------------------------------------------------------
def test_record_list_update_remove(repo):
    reg = Registry()
    assert reg.path == Path(os.environ["PROBE_DATA_DIR"]) / "workspaces.sqlite"
    assert reg.list() == []
    ws = Workspace.open(repo)
    try:
        rec = record_workspace(ws, now=NOW - 5 * DAY)
        assert rec.workspace_id == ws.workspace_id and rec.root == str(repo.resolve())
        assert rec.project_id == ws.project_id and len(rec.project_id) == 12
        assert (rec.preset, rec.collection, rec.backend, rec.url) == ("embedded", "chunks_embedded", "edge", None)
        record_workspace(ws, now=NOW)
    finally:
        ws.close()
    [got] = reg.list()
    assert got.last_seen_at == NOW and got.first_seen_at == NOW - 5 * DAY  # first_seen is kept
    assert reg.get(got.workspace_id) == got
    assert sqlite3.connect(reg.path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    reg.set_last_seen(got.workspace_id, NOW - 100 * DAY)
    assert reg.get(got.workspace_id).last_seen_at == NOW - 100 * DAY
    with pytest.raises(RegistryError, match="not in the registry"):
        reg.set_last_seen("no-such-id", NOW)
    assert reg.remove(got.workspace_id) and reg.list() == [] and not reg.remove(got.workspace_id)


def test_note_seen_never_raises_and_throttles(repo, tmp_path, monkeypatch):
    ws = Workspace.open(repo)
    try:
        assert note_seen(ws) is True
        assert note_seen(ws, min_interval_s=3600) is False  # recorded a moment ago by this process
        blocked = tmp_path / "not-a-dir"
        blocked.write_text("a file where the data dir should be")
        monkeypatch.setenv("PROBE_DATA_DIR", str(blocked))
        assert note_seen(ws) is False  # logged, not raised
    finally:
        ws.close()


def test_stale_selection_with_injected_now():
    recs = [WorkspaceRecord(workspace_id=str(i), root=f"/r{i}", last_seen_at=NOW - age * DAY)
            for i, age in enumerate([0, 29, 31, 400])]
    assert [r.workspace_id for r in stale_workspaces(30 * DAY, NOW, recs)] == ["2", "3"]
    assert [r.workspace_id for r in stale_workspaces(0, NOW, recs)] == ["1", "2", "3"]  # age 0 is not older
    assert stale_workspaces(500 * DAY, NOW, recs) == []


def test_server_workspaces_have_a_heartbeat_floor(monkeypatch):
    # a server workspace seen 5 minutes ago may have a live owner on another machine (its heartbeat
    # re-records every 5 minutes): not stale whatever the threshold; an embedded one is (its lock protects it)
    monkeypatch.delenv("QDRANT_URL", raising=False)
    url = "http://127.0.0.1:9"
    recs = [WorkspaceRecord(workspace_id="srv-old", root="/o", last_seen_at=NOW - SERVER_MIN_AGE_S - 1,
                            backend="qdrant", url=url),
            WorkspaceRecord(workspace_id="srv-fresh", root="/s", last_seen_at=NOW - 300, backend="qdrant", url=url),
            WorkspaceRecord(workspace_id="edge", root="/e", last_seen_at=NOW - 300)]
    assert [r.workspace_id for r in stale_workspaces(0, NOW, recs)] == ["srv-old", "edge"]
    assert [r.workspace_id for r in stale_workspaces(SERVER_MIN_AGE_S + 5, NOW, recs)] == []

    Registry().upsert(recs[1])
    report = prune(60, now=NOW)
    assert report.entries == [] and Registry().get("srv-fresh") is not None
    assert any("not seen for more than 10m" in w for w in report.warnings)
    assert "warning: workspaces on a Qdrant server are pruned only" in render_prune(report)
    assert not any("10m" in w for w in prune(30 * DAY, now=NOW).warnings)


# -- prune: embedded workspaces ----------------------------------------------------------------------
def test_prune_deletes_exactly_the_stale_embedded_index(tmp_path):
    old = make_repo(tmp_path, "old")
    fresh = make_repo(tmp_path, "fresh")
    old_id = indexed(old, seen_at=NOW - 45 * DAY)
    fresh_id = indexed(fresh, seen_at=NOW - 1 * DAY)
    (old / ".probe" / "memory.sqlite").write_text("project rules stay")  # not the index: must survive
    config_before = (old / ".probe" / "config.json").read_text()
    sources_before, fresh_before = tree(old), tree(fresh)
    assert (old / ".probe" / "store").is_dir() and (old / ".probe" / "manifest.sqlite").exists()

    report = prune(30 * DAY, now=NOW)
    assert report.known == 2
    [e] = report.entries
    assert e.record.workspace_id == old_id and e.action == "delete" and e.applied
    assert e.points and e.points > 0 and e.bytes and e.bytes > 0
    assert not (old / ".probe" / "store").exists()
    assert not list((old / ".probe").glob("manifest.sqlite*"))
    assert (old / ".probe" / "config.json").read_text() == config_before  # keeps its id
    assert (old / ".probe" / "memory.sqlite").read_text() == "project rules stay"
    after = tree(old)
    gone = set(sources_before) - set(after)
    assert gone and all(p.startswith(".probe/store/") or p.startswith(".probe/manifest.sqlite") for p in gone)
    assert {p: s for p, s in sources_before.items() if not p.startswith(".probe/")} == \
        {p: s for p, s in after.items() if not p.startswith(".probe/")}
    assert tree(fresh) == fresh_before
    assert [r.workspace_id for r in Registry().list()] == [fresh_id]
    assert "deleted" in render_prune(report) and old_id[:8] in render_prune(report)

    # the fresh one still answers; the pruned one re-indexes from scratch on its next use, same id
    ws = Workspace.open(fresh, create=False)
    try:
        assert search(ws, "hash a password with a salt", top_k=3).results[0].path == "src/auth/passwords.py"
    finally:
        ws.close()
    ws = Workspace.open(old, create=False)
    try:
        assert ws.workspace_id == old_id
        again = index_workspace(ws, dense=False)  # nothing is "unchanged": the manifest is gone
        assert again.files_indexed >= len(REPO_FILES) and again.files_unchanged == 0
    finally:
        ws.close()


@pytest.mark.parametrize("stop_before", ["store", "store.pruning", "manifest.sqlite"])
def test_prune_stopped_midway_leaves_an_index_the_next_run_repairs(stop_before, tmp_path, monkeypatch):
    """A stop between prune's steps (here: the step before ``stop_before`` is deleted raises) must
    never leave a manifest that claims files whose points are gone, nor points no manifest lists:
    the next index run ends with exactly the right, searchable index."""
    import probe_core.registry.pruning as pruning

    root = make_repo(tmp_path, "old")
    wid = indexed(root, seen_at=NOW - 45 * DAY)
    ws = Workspace.open(root, create=False)
    try:
        files_before = set(ws.manifest.file_paths())
    finally:
        ws.close()
    real_remove, real_empty = pruning._remove, pruning._empty_manifest

    def stopping_remove(path, probe_dir):
        if path.name == stop_before:
            raise OSError("simulated stop")
        real_remove(path, probe_dir)

    def stopping_empty(probe_dir):  # stop after the manifest is emptied, before any deletion
        real_empty(probe_dir)
        raise OSError("simulated stop")

    if stop_before == "store":
        monkeypatch.setattr(pruning, "_empty_manifest", stopping_empty)
    else:
        monkeypatch.setattr(pruning, "_remove", stopping_remove)
    [e] = prune(30 * DAY, now=NOW).entries
    assert e.action == "skip" and "simulated stop" in e.reason and Registry().get(wid) is not None
    probe_dir = root / ".probe"
    assert (probe_dir / "store").exists() == (stop_before == "store")
    assert (probe_dir / "manifest.sqlite").exists()
    if stop_before == "manifest.sqlite":
        assert not list(probe_dir.glob("manifest.sqlite-*"))  # WAL/SHM go before the main file
    # (not monkeypatch.undo(): that would also undo the fixture that isolates PROBE_DATA_DIR)
    monkeypatch.setattr(pruning, "_remove", real_remove)
    monkeypatch.setattr(pruning, "_empty_manifest", real_empty)
    # an edit while nothing runs: the old version's points must not survive the next run
    (root / "router/mux.go").write_text("package router\n\n// Router dispatches by path.\ntype Router struct{}\n")

    ws = Workspace.open(root, create=False)
    try:
        assert ws.manifest.get_meta("index_dirty") == "1"
        report = index_workspace(ws, dense=False)
        assert report.files_indexed == len(files_before) and report.files_unchanged == 0
        assert set(ws.manifest.file_paths()) == files_before
        assert set(ws.store.all_ids()) == set(ws.manifest.chunk_ids()) and ws.store.count() > 0
        assert ws.manifest.get_meta("index_dirty") == "0"
        assert search(ws, "hash a password with a salt", top_k=3).results[0].path == "src/auth/passwords.py"
    finally:
        ws.close()
    # the next prune finishes the job, a leftover renamed store included
    [e] = prune(30 * DAY, now=NOW).entries
    assert e.action == "delete" and e.applied
    assert not [p.name for p in probe_dir.iterdir() if p.name.startswith(("store", "manifest.sqlite"))]


def test_prune_skips_a_workspace_in_use(tmp_path):
    root = make_repo(tmp_path, "busy")
    wid = indexed(root, seen_at=NOW - 90 * DAY)
    lock = EngineLock(root / ".probe")
    assert lock.try_acquire()  # a running owner
    before = tree(root)
    try:
        for dry in (True, False):
            [e] = prune(30 * DAY, now=NOW, dry_run=dry).entries
            assert e.action == "skip" and not e.applied and e.reason == f"in use (pid {os.getpid()})"
    finally:
        lock.release()
    assert tree(root) == before and Registry().get(wid) is not None
    [e] = prune(30 * DAY, now=NOW).entries  # released: now it goes
    assert e.action == "delete" and e.applied and not (root / ".probe" / "store").exists()


def test_vanished_root_drops_the_record_only(tmp_path):
    root = make_repo(tmp_path, "gone")
    keep = make_repo(tmp_path, "keep")
    gone_id = indexed(root, seen_at=NOW - 60 * DAY)
    keep_id = indexed(keep, seen_at=NOW - 60 * DAY)
    shutil.rmtree(root)
    # a root that now holds another workspace: its index belongs to that one and stays
    (keep / ".probe" / "config.json").write_text(json.dumps({"workspace_id": "another-id", "preset": "embedded"}))
    keep_before = tree(keep)
    entries = {e.record.workspace_id: e for e in prune(30 * DAY, now=NOW).entries}
    assert entries[gone_id].action == "drop" and entries[gone_id].reason == "root no longer exists"
    assert entries[keep_id].action == "drop" and entries[keep_id].reason == "root now holds workspace another-id"
    assert all(e.applied for e in entries.values())
    assert Registry().list() == [] and tree(keep) == keep_before and not root.exists()


def test_dry_run_changes_nothing(tmp_path):
    a = make_repo(tmp_path, "a")
    b = make_repo(tmp_path, "b")
    a_id = indexed(a, seen_at=NOW - 31 * DAY)
    b_id = indexed(b, seen_at=NOW - 2 * DAY)
    before = (tree(a), tree(b), sorted((r.workspace_id, r.last_seen_at) for r in Registry().list()))
    report = prune(30 * DAY, now=NOW, dry_run=True)
    [e] = report.entries
    assert (e.record.workspace_id, e.action, e.applied) == (a_id, "delete", False)
    assert e.points and e.bytes and any(p.endswith("/.probe/store") for p in e.deleted_paths)
    assert (tree(a), tree(b), sorted((r.workspace_id, r.last_seen_at) for r in Registry().list())) == before
    text = render_prune(report)
    assert "would delete" in text and "dry run" in text and b_id[:8] not in text


def test_cli_prune_json_and_table(tmp_path):
    a = make_repo(tmp_path, "a")
    a_id = indexed(a, seen_at=time.time() - 40 * DAY)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    run = [sys.executable, "-m", "probe_cli", "prune", "--older-than", "30d"]
    listed = subprocess.run([sys.executable, "-m", "probe_cli", "workspaces", "--json"], capture_output=True,
                            text=True, env=env, check=True)
    assert [(r["workspace_id"], r["root"]) for r in json.loads(listed.stdout)] == [(a_id, str(a.resolve()))]
    out = subprocess.run([*run, "--dry-run", "--json"], capture_output=True, text=True, env=env, check=True)
    [e] = json.loads(out.stdout)
    assert (e["workspace_id"], e["action"], e["applied"], e["age"]) == (a_id, "delete", False, "40d")
    assert (a / ".probe" / "store").exists()
    out = subprocess.run(run, capture_output=True, text=True, env=env, check=True)
    assert "deleted" in out.stdout and str(a.resolve()) in out.stdout
    assert not (a / ".probe" / "store").exists()
    out = subprocess.run(run, capture_output=True, text=True, env=env, check=True)
    assert out.stdout.startswith("0 of 0 known workspace(s) not seen for more than 30d")


# -- prune: the Qdrant server path (qdrant-client local mode) ------------------------------------------
def test_prune_on_a_qdrant_server(tmp_path, monkeypatch):
    url = f"local:{tmp_path / 'qdrant-local'}"
    monkeypatch.setenv("QDRANT_URL", url)
    old = make_repo(tmp_path, "old")
    fresh = make_repo(tmp_path, "fresh")
    old_id = indexed(old, seen_at=NOW - 45 * DAY)
    fresh_id = indexed(fresh, seen_at=NOW - 1 * DAY)
    assert not (old / ".probe" / "store").exists()  # the points live on the server

    from probe_core.storage.qdrant_server import QdrantServerStore

    other_id = "0b5c1f0e-1111-4222-8333-944455556666"
    store = QdrantServerStore.connect(url, "chunks_embedded")  # a collection shared by workspaces, as before
    try:
        # another machine's workspace on the same server, seen by it 90 days ago; only the server knows it
        store.ensure_collection(384)
        store.upsert([StorePoint(id="7d0c4a55-0000-4000-8000-000000000001", sparse=SparseVec([1, 2], [1.0, 1.0]),
                                 payload={"workspace_id": other_id, "file_path": "x.py"})])
        server_upsert(store.client, WorkspaceRecord(workspace_id=other_id, root="/home/else/repo",
                                                    last_seen_at=NOW - 90 * DAY, preset="embedded",
                                                    collection="chunks_embedded", backend="qdrant", url=url,
                                                    host="another-box"))
        own = {w: f"chunks_embedded_{w}" for w in (old_id, fresh_id)}  # one collection per workspace
        counts = {w: store.client.count(own[w], exact=True).count for w in own}
        counts[other_id] = store.count(StoreFilter(workspace_id=other_id))
        assert counts[old_id] > 0 and counts[fresh_id] > 0 and counts[other_id] == 1
        assert {r.workspace_id for r in server_records(store.client)} == {old_id, fresh_id, other_id}
    finally:
        store.close()

    assert {r.workspace_id for r in list_workspaces()} == {old_id, fresh_id, other_id}  # local + server
    report = prune(30 * DAY, now=NOW)
    entries = {e.record.workspace_id: e for e in report.entries}
    assert set(entries) == {old_id, other_id}
    assert entries[old_id].action == "delete" and entries[old_id].points == counts[old_id]
    assert entries[other_id].action == "delete" and entries[other_id].points == 1
    assert "another-box" in entries[other_id].reason
    assert all(e.applied for e in entries.values())
    assert not list((old / ".probe").glob("manifest.sqlite*")) and (old / ".probe" / "config.json").exists()
    assert (fresh / ".probe" / "manifest.sqlite").exists()

    store = QdrantServerStore.connect(url, own[fresh_id])
    try:  # the pruned workspaces' collections are gone (the shared one emptied with its last workspace)
        assert not store.client.collection_exists(own[old_id])
        assert not store.client.collection_exists("chunks_embedded")
        assert store.count() == counts[fresh_id]
        assert [r.workspace_id for r in server_records(store.client)] == [fresh_id]
        assert store.client.collection_exists(SERVER_COLLECTION)
    finally:
        store.close()
    assert [r.workspace_id for r in Registry().list()] == [fresh_id]

    ws = Workspace.open(fresh, create=False)
    try:
        assert search(ws, "hash a password with a salt", top_k=3).results[0].path == "src/auth/passwords.py"
    finally:
        ws.close()


def test_unreachable_server_skips_its_workspaces(tmp_path, monkeypatch):
    monkeypatch.delenv("QDRANT_URL", raising=False)
    Registry().upsert(WorkspaceRecord(workspace_id="11111111-2222-4333-8444-555555555555", root=str(tmp_path),
                                      last_seen_at=NOW - 60 * DAY, collection="chunks_lite", backend="qdrant",
                                      url="http://127.0.0.1:9", host="another-box"))
    report = prune(30 * DAY, now=NOW)
    [e] = report.entries
    assert e.action == "skip" and "127.0.0.1:9" in e.reason and not e.applied
    assert report.warnings and Registry().list() != []


@pytest.mark.parametrize("kind", ["edge", "qdrant-local"])
def test_delete_workspace_in_both_stores(kind, tmp_path):
    from probe_core.storage.edge import EdgeStore
    from probe_core.storage.qdrant_server import QdrantServerStore

    store = (EdgeStore(tmp_path / "shard", "chunks_t") if kind == "edge"
             else QdrantServerStore.connect("local::memory:", "chunks_t"))
    try:
        store.ensure_collection(4)
        points = [StorePoint(id=f"00000000-0000-4000-8000-00000000000{i}", sparse=SparseVec([i + 1], [1.0]),
                             payload={"workspace_id": "ws-a" if i < 3 else "ws-b", "file_path": f"f{i}.py"})
                  for i in range(5)]
        if kind == "edge":  # a shard holds one workspace (``storage/edge_payload.py`` ``ShardIds``)
            store.upsert(points[:3])
            store.delete_workspace("ws-b")
            assert store.count() == 3
            store.delete_workspace("ws-a")
            assert store.count(StoreFilter(workspace_id="ws-a")) == 0 == store.count()
            return
        store.upsert(points)
        store.delete_workspace("ws-a")
        assert store.count(StoreFilter(workspace_id="ws-a")) == 0
        assert store.count(StoreFilter(workspace_id="ws-b")) == 2 and store.count() == 2
    finally:
        store.close()
