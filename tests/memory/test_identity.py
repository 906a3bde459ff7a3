"""Project identity: remote normalization, reading real git configs, clone disambiguation, re-keying."""
from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from probe_core import Workspace, index_workspace
from probe_core.memory.identity import (
    ProjectRegistry,
    normalize_remote,
    project_id,
    read_git_remote,
    rekey_project,
    resolve_project_id,
    sync_project_id,
)
from probe_core.storage.protocol import StoreFilter


def sha12(s: str) -> str:
    return hashlib.sha256(s.encode()).hexdigest()[:12]


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def git_repo(path: Path, **remotes: str) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git("init", "-q", "-b", "main", str(path), cwd=path)
    for name, url in remotes.items():
        git("remote", "add", name, url, cwd=path)
    return path


@pytest.mark.parametrize("url", [
    "https://github.com/User/Repo.git",
    "https://github.com/user/repo",
    "http://github.com/user/repo.git",
    "HTTPS://GITHUB.COM/USER/REPO",
    "https://github.com/user/repo/",
    "https://github.com/user/repo.git/",
    "https://alice:s3cret@github.com/user/repo.git",
    "https://token@github.com/user/repo",
    "git@github.com:user/repo.git",
    "git@github.com:User/Repo",
    "github.com:user/repo.git",
    "ssh://git@github.com/user/repo.git",
    "ssh://git@github.com:2222/user/repo.git",
    "ssh://github.com/user/repo",
    "git://github.com/user/repo.git",
    "  https://github.com/user/repo.git  ",
])
def test_normalize_remote_forms(url):
    assert normalize_remote(url) == "github.com/user/repo"


def test_normalize_keeps_nested_paths_and_differs_by_host():
    assert normalize_remote("git@gitlab.com:Group/Sub/Proj.git") == "gitlab.com/group/sub/proj"
    assert normalize_remote("ssh://u@gitlab.example.org:2222/a/b/") == "gitlab.example.org/a/b"
    assert normalize_remote("https://github.com/a/b") != normalize_remote("https://gitlab.com/a/b")


def test_read_git_remote_prefers_origin_else_first(tmp_path):
    both = git_repo(tmp_path / "both", upstream="https://example.com/up/x.git",
                    origin="git@github.com:me/x.git")
    assert read_git_remote(both) == "git@github.com:me/x.git"
    only = git_repo(tmp_path / "only", upstream="https://example.com/up/y.git")
    assert read_git_remote(only) == "https://example.com/up/y.git"
    none = git_repo(tmp_path / "none")
    assert read_git_remote(none) is None
    assert read_git_remote(tmp_path / "not-a-repo") is None


def test_read_git_remote_through_a_worktree(tmp_path):
    main = git_repo(tmp_path / "main", origin="https://github.com/me/wt.git")
    (main / "f.txt").write_text("x")
    git("add", "f.txt", cwd=main)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init", cwd=main)
    wt = tmp_path / "wt"
    git("worktree", "add", "-q", str(wt), "-b", "feature", cwd=main)
    assert (wt / ".git").is_file()
    assert read_git_remote(wt) == "https://github.com/me/wt.git"
    assert project_id(wt) == project_id(main) == sha12("github.com/me/wt")


def test_no_remote_uses_folder_name(tmp_path):
    root = git_repo(tmp_path / "some" / "my-project")
    assert project_id(root) == sha12("my-project")
    plain = tmp_path / "elsewhere" / "my-project"
    plain.mkdir(parents=True)
    assert project_id(plain) == sha12("my-project")  # a moved local project keeps its id


def test_remote_id_is_shared_by_url_forms(tmp_path):
    a = git_repo(tmp_path / "a", origin="git@github.com:Me/Proj.git")
    b = git_repo(tmp_path / "b", origin="https://github.com/me/proj")
    assert project_id(a) == project_id(b) == sha12("github.com/me/proj")


def test_two_clones_are_disambiguated_by_path_suffix(tmp_path):
    url = "https://github.com/user/myproject.git"
    c1 = git_repo(tmp_path / "work" / "client-a" / "myproject", origin=url).resolve()
    c2 = git_repo(tmp_path / "personal" / "myproject", origin=url).resolve()
    key = "github.com/user/myproject"
    reg = ProjectRegistry(tmp_path / "data" / "projects.json")

    # the first clone alone gets the plain remote id
    assert resolve_project_id(c1, reg) == sha12(key)
    # the second clone registers: both now carry the shortest distinguishing suffix
    id2 = resolve_project_id(c2, reg)
    id1 = resolve_project_id(c1, reg)
    assert id1 == sha12(f"{key}:client-a/myproject")
    assert id2 == sha12(f"{key}:personal/myproject")
    assert id1 != id2
    # deterministic, independent of registration order
    known = {str(c1): key, str(c2): key}
    assert project_id(c1, known) == id1 and project_id(c2, dict(reversed(known.items()))) == id2
    assert json.loads(reg.path.read_text())["roots"] == {str(c1): key, str(c2): key}

    # a clone that disappears from disk stops forcing disambiguation
    subprocess.run(["rm", "-rf", str(c2)], check=True)
    assert resolve_project_id(c1, reg) == sha12(key)


def test_suffix_falls_back_to_full_path_when_one_root_ends_the_other(tmp_path):
    key = "h/r"
    short = Path("/a/b")
    long = Path("/x/a/b")
    assert project_id(long, {str(short): key}, key=key) == sha12(f"{key}:x/a/b")
    assert project_id(short, {str(long): key}, key=key) == sha12(f"{key}:/a/b")


def test_resolve_falls_back_to_folder_name_on_unwritable_registry(tmp_path):
    root = git_repo(tmp_path / "proj", origin="https://github.com/u/p")
    blocker = tmp_path / "file"
    blocker.write_text("")
    reg = ProjectRegistry(blocker / "projects.json")  # parent is a file: OSError on write
    assert resolve_project_id(root, reg) == sha12("github.com/u/p")


def test_workspace_gaining_a_remote_is_rekeyed_in_place(repo):
    ws = Workspace.open(repo)
    index_workspace(ws)
    old = ws.project_id
    assert old == sha12("repo") and ws.manifest.get_meta("project_id") == old
    total = ws.store.count(StoreFilter(workspace_id=ws.workspace_id))
    dense = ws.store.count(with_dense=True)
    assert total > 0 and ws.store.count(StoreFilter(project_id=old)) == total
    files_before = ws.manifest.files()
    chunks_before = ws.manifest.chunk_ids()
    gen_before = ws.manifest.generation
    ids_before = ws.store.all_ids()

    git("remote", "add", "origin", "git@github.com:Acme/Repo.git", cwd=repo)
    del ws.__dict__["project_id"]  # what a fresh open would compute
    new = ws.project_id
    assert new == sha12("github.com/acme/repo") != old

    assert sync_project_id(ws) is True
    assert ws.manifest.get_meta("project_id") == new
    assert ws.store.count(StoreFilter(project_id=new)) == total
    assert ws.store.count(StoreFilter(project_id=old)) == 0
    # nothing re-embedded or re-indexed: same points, same dense vectors, manifest rows untouched
    assert ws.store.all_ids() == ids_before
    assert ws.store.count(with_dense=True) == dense
    assert ws.manifest.files() == files_before and ws.manifest.chunk_ids() == chunks_before
    assert ws.manifest.generation == gen_before
    assert sync_project_id(ws) is False  # idempotent

    rep = index_workspace(ws)
    assert rep.files_indexed == 0 and rep.chunks_embedded == 0
    ws.close()


def test_rekey_project_then_reopen_keeps_the_new_id(repo):
    ws = Workspace.open(repo)
    index_workspace(ws)
    total = ws.store.count()
    rekey_project(ws, "abcdefabcdef")
    assert ws.project_id == "abcdefabcdef"
    assert ws.store.count(StoreFilter(project_id="abcdefabcdef")) == total
    ws.close()

    ws2 = Workspace.open(repo)  # reopened: computed id is the folder-name id again → re-keyed back
    assert ws2.manifest.get_meta("project_id") == "abcdefabcdef"
    index_workspace(ws2)
    assert ws2.manifest.get_meta("project_id") == sha12("repo")
    assert ws2.store.count(StoreFilter(project_id=sha12("repo"))) == total
    ws2.close()
