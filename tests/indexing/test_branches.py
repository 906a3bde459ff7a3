"""Branches on a real git repository: tags in the payload, default filter, checkout diffs, deletion."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from probe_core import Workspace, index_status, index_workspace, search

MAIN_A = "def alpha_checksum(data):\n    \"\"\"Adler style checksum of the payload.\"\"\"\n    return sum(data) % 65521\n"
FEATURE_A = ("def zebra_compression(data):\n    \"\"\"Run-length compression of the payload.\"\"\"\n"
             "    return bytes(data)\n")
SHARED = "def shared_helper(x):\n    \"\"\"Clamp a value into the unit interval.\"\"\"\n    return max(0, min(1, x))\n"
FEATURE_ONLY = "def feature_toggle_registry():\n    \"\"\"Feature flags known to the service.\"\"\"\n    return {}\n"


def git(root: Path, *args: str) -> str:
    out = subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True,
                         env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                              "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"})
    return out.stdout


@pytest.fixture
def two_branches(tmp_path) -> Path:
    """main: a.py (alpha), shared.py. feature: a.py (zebra), shared.py, only_feature.py."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text(".probe/\n")
    (root / "a.py").write_text(MAIN_A)
    (root / "shared.py").write_text(SHARED)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "main")
    git(root, "checkout", "-qb", "feature")
    (root / "a.py").write_text(FEATURE_A)
    (root / "only_feature.py").write_text(FEATURE_ONLY)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "feature")
    git(root, "checkout", "-q", "main")
    return root


def tags(ws: Workspace) -> dict[tuple[str, str], list[str]]:
    """(path, file_hash) → branch tag, read back from the store."""
    out = {}
    for r in _payloads(ws):
        out.setdefault((r["file_path"], r["file_hash"]), sorted(r["branch"]))
    return out


def _payloads(ws: Workspace) -> list[dict]:
    import qdrant_edge as qe

    shard = ws.store._s()
    pts, _ = shard.scroll(qe.ScrollRequest(limit=10_000, with_payload=True, with_vector=False))
    return [ws.store._keys.decode(p.payload, str(p.id)) for p in pts]  # the protocol's key names


def paths(resp) -> list[str]:
    return [r.path for r in resp.results]


def test_checkout_reindexes_only_what_differs_and_search_follows_the_branch(two_branches):
    root = two_branches
    ws = Workspace.open(root)
    first = index_workspace(ws)
    assert first.files_indexed == 3  # .gitignore, a.py, shared.py
    main_points = ws.store.count()
    assert {tuple(v) for v in tags(ws).values()} == {("main",)}

    git(root, "checkout", "-q", "feature")
    rep = index_workspace(ws)
    # only a.py (changed) and only_feature.py (new) are chunked and embedded; the rest is retagged
    assert rep.files_indexed == 2 and rep.files_unchanged == 2 and rep.files_retagged == 2
    assert rep.chunks_embedded == rep.chunks_indexed == 2
    t = tags(ws)
    assert t[("shared.py", _hash(SHARED))] == ["feature", "main"]
    assert t[("a.py", _hash(MAIN_A))] == ["main"]  # main's version kept, not deleted
    assert t[("a.py", _hash(FEATURE_A))] == ["feature"]
    assert t[("only_feature.py", _hash(FEATURE_ONLY))] == ["feature"]

    st = index_status(ws)
    assert st["branch"] == "feature" and st["indexed_branches"] == ["feature", "main"]
    # default: the checked-out branch only
    assert "a.py" in paths(search(ws, "zebra compression run-length"))
    alpha = search(ws, "alpha_checksum adler", top_k=5)
    assert all(r.symbol != "alpha_checksum" for r in alpha.results)
    # a named branch: main's version, its snippet read from git (the disk has feature's file)
    on_main = search(ws, "alpha_checksum adler", top_k=5, filters={"branch": "main"})
    hit = next(r for r in on_main.results if r.path == "a.py")
    assert hit.branches == ["main"] and "alpha_checksum" in hit.snippet and not hit.stale
    assert all(r.path != "only_feature.py" for r in search(ws, "feature toggle registry",
                                                           filters={"branch": "main"}).results)
    # every branch
    both = search(ws, "payload checksum compression", top_k=10, filters={"branch": "*"})
    a_versions = {(r.path, r.symbol) for r in both.results if r.path == "a.py"}
    assert a_versions == {("a.py", "alpha_checksum"), ("a.py", "zebra_compression")}
    checked_out = next(r for r in both.results if r.symbol == "zebra_compression")
    assert checked_out.branches is None  # the checked-out version: read from disk as usual

    # back to main: a.py's main version is revived, nothing is embedded again
    git(root, "checkout", "-q", "main")
    back = index_workspace(ws)
    assert back.files_revived == 1 and back.chunks_embedded == 0 and back.files_deleted == 1
    assert ws.store.count() == main_points + 2  # feature's a.py and only_feature.py stay for feature
    assert "a.py" in paths(search(ws, "alpha_checksum adler", top_k=3))
    feature_hit = search(ws, "feature toggle registry", filters={"branch": "feature"})
    assert feature_hit.results[0].path == "only_feature.py" and feature_hit.results[0].branches == ["feature"]
    assert "only_feature.py" not in paths(search(ws, "feature toggle registry"))

    # the branch is deleted: its versions go, main's stay exactly
    git(root, "branch", "-qD", "feature")
    gone = index_workspace(ws)
    assert gone.branches == {"branches_removed": ["feature"], "points_deleted": 2}
    assert ws.store.count() == main_points
    assert set(ws.store.all_ids()) == set(ws.manifest.chunk_ids()) == set(ws.manifest.chunk_ids(live=True))
    assert {tuple(v) for v in tags(ws).values()} == {("main",)}
    unknown = search(ws, "alpha", filters={"branch": "feature"})
    assert unknown.results == [] and "has not been indexed" in (unknown.message or "")
    ws.close()


def test_outside_git_nothing_is_filtered(tmp_path):
    root = tmp_path / "plain"
    root.mkdir()
    (root / "a.py").write_text(MAIN_A)
    ws = Workspace.open(root)
    index_workspace(ws)
    assert {tuple(v) for v in tags(ws).values()} == {()}
    assert search(ws, "alpha checksum").results[0].path == "a.py"
    ws.close()


def test_upgraded_index_with_string_tags_is_retagged(two_branches):
    """Indexes written before branch lists held ``branch: "main"``: the next run lists it."""
    ws = Workspace.open(two_branches)
    index_workspace(ws)
    ids = list(ws.store.all_ids())
    ws.store.set_payload_ids(ids, {"branch": "main"})
    with ws.manifest.transaction() as db:
        db.execute("DELETE FROM branch_files")
    rep = index_workspace(ws)
    assert rep.files_retagged == 3 and rep.files_indexed == 0
    assert {tuple(v) for v in tags(ws).values()} == {("main",)}
    ws.close()


def _hash(text: str) -> str:
    from probe_core.records import short_hash

    return short_hash(text)


# -- a stop before any write, in every branch operation ------------------------------------------
STORE_WRITES = ("upsert", "set_dense", "set_payload", "set_payload_ids", "delete_ids", "delete_file")
MANIFEST_WRITES = ("replace_file", "add_files", "remove_file", "revive", "mark_error", "drop_version", "set_branch_file",
                   "set_branch_files", "forget_branch", "set_meta", "mark_dense_done")


class Stop(BaseException):
    """A stand-in for kill -9 at an exact write."""


def stop_at(ws: Workspace, n: int) -> dict:
    """Make the ``n``-th store or manifest write (0-based) raise ``Stop``; returns the counter."""
    seen = {"writes": 0}
    for obj, names in ((ws.store, STORE_WRITES), (ws.manifest, MANIFEST_WRITES)):
        for name in names:
            orig = getattr(obj, name)

            def wrapped(*a, _orig=orig, **k):
                if seen["writes"] == n:
                    raise Stop()
                seen["writes"] += 1
                return _orig(*a, **k)

            setattr(obj, name, wrapped)
    return seen


def assert_consistent(ws: Workspace) -> None:
    """store == manifest, every point tagged as ``branch_files`` says, no version without a holder."""
    import qdrant_edge as qe

    assert set(ws.store.all_ids()) == set(ws.manifest.chunk_ids())
    want = {pid: sorted(j.split("\x1f")) if j else [] for pid, j in ws.manifest.version_tags()}
    pts, _ = ws.store._s().scroll(qe.ScrollRequest(limit=10_000, with_payload=True, with_vector=False))
    got = {str(p.id): sorted(ws.store._keys.decode(p.payload, str(p.id))["branch"]) for p in pts}
    assert got == want
    assert ws.manifest.unheld_versions() == []
    assert all(ws.branch in tags for pid, tags in want.items() if pid in ws.manifest.chunk_ids(live=True))


def _scenario(root: Path, name: str) -> None:
    """Bring ``root`` (the two_branches repo, main checked out, nothing indexed) to the state just
    before the operation under test, and make that operation's git change."""
    ws = Workspace.open(root)
    index_workspace(ws, dense=False)
    if name in ("switch back", "delete branch"):
        git(root, "checkout", "-q", "feature")
        index_workspace(ws, dense=False)
        git(root, "checkout", "-q", "main")
        if name == "delete branch":
            index_workspace(ws, dense=False)
            git(root, "branch", "-qD", "feature")
    else:
        git(root, "checkout", "-q", "feature")
    ws.close()


@pytest.mark.parametrize("name", ["checkout", "switch back", "delete branch"])
def test_a_stop_at_any_write_is_repaired_by_the_next_run(two_branches, tmp_path, name):
    import shutil

    template = tmp_path / "template"
    shutil.copytree(two_branches, template)
    _scenario(template, name)
    probe = Workspace.open(template)
    counter = stop_at(probe, -1)
    index_workspace(probe, dense=False)
    writes = counter["writes"]
    probe.close()
    assert writes > 3
    for n in range(writes):
        root = tmp_path / f"run{n}"
        shutil.copytree(two_branches, root)
        _scenario(root, name)
        ws = Workspace.open(root)
        stop_at(ws, n)
        with pytest.raises(Stop):
            index_workspace(ws, dense=False)
        ws.close()
        ws = Workspace.open(root)  # the next run, as after a restart
        index_workspace(ws, dense=False)
        assert_consistent(ws)
        assert {r.path for r in search(ws, "shared helper clamp unit interval").results} >= {"shared.py"}
        ws.close()
        shutil.rmtree(root)


def test_a_file_that_failed_keeps_its_branch_tags_right(two_branches, monkeypatch):
    """A file whose embedding failed still gains the new branch on checkout; a file whose chunking
    fails leaves no points of its old version behind (kept for main, not shown on feature)."""
    import probe_core.indexing.profile as code_profile  # the code workspace's chunker (was the indexer's)

    ws = Workspace.open(two_branches)
    index_workspace(ws, dense=False)
    with ws.manifest.transaction() as db:  # as if the embedder had refused one of its chunks
        db.execute("UPDATE files SET last_error='embedding failed: x' WHERE path='shared.py'")
    git(two_branches, "checkout", "-q", "feature")
    real_chunk_file = code_profile.chunk_file

    def broken(path, text):
        if path == "a.py":
            raise RuntimeError("chunker bug")
        return real_chunk_file(path, text)

    monkeypatch.setattr(code_profile, "chunk_file", broken)
    rep = index_workspace(ws, dense=False)
    assert ("a.py", "chunking failed: chunker bug") in rep.errors
    t = tags(ws)
    assert t[("shared.py", _hash(SHARED))] == ["feature", "main"]
    assert t[("a.py", _hash(MAIN_A))] == ["main"]  # main's version kept for main only
    assert set(ws.store.all_ids()) == set(ws.manifest.chunk_ids())
    assert all(r.path != "a.py" for r in search(ws, "alpha checksum adler payload").results)
    ws.close()


def test_reconcile_after_lost_points_in_a_git_workspace(two_branches):
    """Points missing from the store (a store deleted under the manifest, a crash) on a branch-
    tracked workspace: the next run redoes those files and tags the rest, it does not fail."""
    ws = Workspace.open(two_branches)
    index_workspace(ws, dense=False)
    git(two_branches, "checkout", "-q", "feature")
    index_workspace(ws, dense=False)
    lost = [c.point_id for c in ws.manifest.chunks_for("shared.py")] + ws.manifest.version_ids("a.py", _hash(MAIN_A), live=False)
    ws.store.delete_ids(lost)
    ws.manifest.set_meta("index_dirty", "1")
    rep = index_workspace(ws, dense=False)
    assert rep.reconciled["files_redone"] == 1 and rep.reconciled["versions_dropped"] == 1
    assert set(ws.store.all_ids()) == set(ws.manifest.chunk_ids())
    assert tags(ws)[("shared.py", _hash(SHARED))] == ["feature", "main"]
    assert search(ws, "shared helper clamp").results[0].path == "shared.py"
    ws.close()


def test_a_checkout_without_reindex_never_mixes_in_the_last_indexed_branchs_lines(two_branches):
    """The exact-match lists read the live chunks, which are the last indexed branch's versions:
    after a checkout that is not indexed yet they must not add that branch's lines to an answer
    for the checked-out one (a file would come back twice, its other version marked stale)."""
    root = two_branches
    ws = Workspace.open(root)
    index_workspace(ws, dense=False)
    git(root, "checkout", "-q", "feature")
    index_workspace(ws, dense=False)
    git(root, "checkout", "-q", "main")
    index_workspace(ws, dense=False)  # the live chunks are main's again
    git(root, "checkout", "-q", "feature")  # and feature is checked out without a re-index
    query = '"of the payload"'  # in both versions of a.py
    got = search(ws, query, top_k=10).results
    a_py = [r for r in got if r.path == "a.py"]
    assert [r.symbol for r in a_py] == ["zebra_compression"]  # feature's version, once
    assert not any(r.stale for r in got) and not any(r.signals.get("literal_rank") for r in got)
    # main's versions are the live ones, and a search of main shows them
    on_main = search(ws, query, top_k=10, filters={"branch": "main"}).results
    assert [r.symbol for r in on_main if r.path == "a.py"] == ["alpha_checksum"]
    ws.close()
