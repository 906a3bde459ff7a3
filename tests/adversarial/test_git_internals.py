"""Git's internals are never a workspace and never indexed. Before the fix, ``--root repo.git`` (a
bare repository) or ``--root repo/.git`` indexed them, and ``config`` with a remote URL holding a
token came back from ``search`` and ``open_file``.

* a bare repository, ``repo/.git`` and a folder inside it are refused as roots by every verb and
  by ``probe mcp``, in one line, with nothing created in them;
* inside a working tree: nested ``.git`` directories, the ``.git`` files of a linked worktree and
  of a submodule, and a bare repository nested in the tree (``fixtures/lib.git``) are never indexed
  (the nested bare repository is listed as skipped, ``git_dir``) nor read by ``open_file``.
"""
from __future__ import annotations

import json
import subprocess

import pytest

from probe_core.engine.answers import open_file_answer
from probe_core.errors import PathOutsideRoot
from probe_core.scan import scan_files

from .conftest import REPO_FILES, probe_cli, tally, write_tree

TOKEN = "ghp_zq7TokenInARemoteUrl"
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "protocol.file.allow=always"]


def _repo_with_secret_remote(path):
    root = write_tree(path, REPO_FILES)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    subprocess.run([*GIT, "-C", str(root), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(root), "commit", "-q", "-m", "init"], check=True)
    subprocess.run(["git", "-C", str(root), "remote", "add", "origin", f"https://bot:{TOKEN}@example.com/r.git"],
                   check=True)
    return root


@pytest.fixture
def repos(tmp_path):
    repo = _repo_with_secret_remote(tmp_path / "repo")
    bare = tmp_path / "repo.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(bare)], check=True)
    subprocess.run(["git", "-C", str(bare), "config", "remote.origin.url", f"https://bot:{TOKEN}@example.com/r.git"],
                   check=True)
    return repo, bare


@pytest.mark.parametrize("which", ["bare", "dot_git", "inside_dot_git"])
def test_git_internals_are_refused_as_a_root(repos, which):
    repo, bare = repos
    root = {"bare": bare, "dot_git": repo / ".git", "inside_dot_git": repo / ".git" / "refs"}[which]
    for verb in (("init",), ("index",), ("index", "--background"), ("search", "token"), ("status",), ("mcp",)):
        out = probe_cli(*verb, root=root, check=False, env={"PROBE_DAEMON": "0"}, timeout=60)
        assert out.returncode == 1, (verb, out.stdout, out.stderr)
        assert out.stderr.startswith("probe: error: ") and out.stderr.count("\n") == 1, (verb, out.stderr)
        assert "bare git repository" in out.stderr or ".git directory" in out.stderr, out.stderr
        assert TOKEN not in out.stdout + out.stderr
        tally("git_internals.roots_refused")
    assert not (root / ".probe").exists()


def test_git_directories_inside_a_tree_are_never_indexed_or_read(tmp_path):
    repo = _repo_with_secret_remote(tmp_path / "repo")
    # a linked worktree (.git is a file) and a submodule (.git file, its git dir under .git/modules)
    subprocess.run([*GIT, "-C", str(repo), "worktree", "add", "-q", str(repo / "wt"), "-b", "side"], check=True)
    lib = _repo_with_secret_remote(tmp_path / "lib")
    subprocess.run([*GIT, "-C", str(repo), "submodule", "add", "-q", str(lib), "vendor/lib"], check=True)
    # a clone inside the tree (a nested .git directory) and a bare repository nested in it
    subprocess.run(["git", "clone", "-q", str(lib), str(repo / "third_party" / "clone")], check=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(lib), str(repo / "fixtures" / "lib.git")], check=True)
    for git_dir in (repo / "third_party" / "clone" / ".git", repo / "fixtures" / "lib.git"):
        subprocess.run(["git", "--git-dir", str(git_dir), "config", "remote.origin.url",
                        f"https://bot:{TOKEN}@example.com/r.git"], check=True)
    assert (repo / "wt" / ".git").is_file() and (repo / "vendor" / "lib" / ".git").is_file()

    scan = scan_files(repo)
    paths = [f.path for f in scan.files]
    assert not [p for p in paths if ".git/" in p or p.endswith(".git") or p.startswith("fixtures/")], paths
    assert "vendor/lib/src/auth/passwords.py" in paths and "wt/src/auth/passwords.py" in paths  # the checkouts are
    assert {(s.path, s.reason) for s in scan.skipped} == {("fixtures/lib.git", "git_dir")}

    probe_cli("index", "--lexical-only", root=repo, env={"PROBE_DAEMON": "0"})
    found = json.loads(probe_cli("search", f"{TOKEN} remote origin url", "--json", root=repo,
                                 env={"PROBE_DAEMON": "0"}).stdout)
    assert not [r for r in found["results"] if TOKEN in json.dumps(r) or "config" == r["path"].rsplit("/", 1)[-1]]
    status = json.loads(probe_cli("status", "--json", root=repo, env={"PROBE_DAEMON": "0"}).stdout)
    assert "git_dir" in json.dumps(status)
    for path in (".git/config", "fixtures/lib.git/config", "fixtures/lib.git/HEAD", "third_party/clone/.git/config",
                 ".git/modules/vendor/lib/config", "wt/.git"):
        with pytest.raises(PathOutsideRoot):
            open_file_answer(repo, path, 1, 5)
        tally("git_internals.reads_refused")
