"""Probe writes nothing in the user's tree outside ``.probe/``: after ``probe init``, ``probe index``
(also ``--background``), ``search``, ``status`` and a ``probe mcp`` session on a clean git
repository, ``git status`` is still clean. ``.probe/`` keeps itself out of git with its own
``.gitignore`` (``*``), and the user's ``.gitignore`` is never created or edited.

Before the fix, every ``probe index --background`` appended ``.probe/`` to the repository's
``.gitignore`` (creating it when absent): a tracked file changed behind the user's back, which
blocked ``git checkout`` and was then indexed itself."""
from __future__ import annotations

import subprocess

import anyio

from .conftest import REPO_FILES, probe_cli, probe_mcp, search, tally, wait_indexed, write_tree


def _clean_repo(tmp_path, *, gitignore: str | None):
    files = dict(REPO_FILES)
    if gitignore is not None:
        files[".gitignore"] = gitignore
    root = write_tree(tmp_path / "repo", files)
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "init"], check=True)
    return root


def _git_status(root) -> str:
    return subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=all",
                           "--ignored=no"], capture_output=True, text=True, check=True).stdout


def test_no_verb_changes_what_git_sees(tmp_path):
    for case, gitignore in (("none", None), ("own", "*.log\n")):  # no .gitignore at all; the user's own
        root = _clean_repo(tmp_path / case, gitignore=gitignore)
        before = (root / ".gitignore").read_bytes() if gitignore is not None else None
        probe_cli("init", root=root)
        probe_cli("index", "--lexical-only", root=root, env={"PROBE_DAEMON": "0"})
        probe_cli("index", "--background", root=root, env={"PROBE_DAEMON": "1"})
        probe_cli("search", "hash password", root=root)
        probe_cli("status", root=root)
        probe_cli("stop", root=root, check=False)
        assert _git_status(root) == "", case
        after = (root / ".gitignore").read_bytes() if (root / ".gitignore").exists() else None
        assert after == before, case  # neither created nor edited
        assert (root / ".probe" / ".gitignore").read_text().splitlines()[-1] == "*"
        tally("users_tree.verbs_leaving_git_clean", 6)


def test_a_probe_mcp_session_leaves_git_clean(tmp_path):
    root = _clean_repo(tmp_path, gitignore=None)

    async def scenario():
        async with probe_mcp(root) as client:
            await wait_indexed(client)
            out = await search(client, "hash password")
            assert out["results"]
            assert not any(r["path"] == ".gitignore" for r in out["results"])

    anyio.run(scenario)
    assert _git_status(root) == ""
    assert not (root / ".gitignore").exists()
    tally("users_tree.verbs_leaving_git_clean")


def test_an_index_made_before_the_fix_gains_its_own_gitignore(tmp_path):
    """A ``.probe/`` from an older Probe (no ``.probe/.gitignore``): the next verb adds it, and the
    user's ``.gitignore`` (which the older Probe edited) is left as it is."""
    root = _clean_repo(tmp_path, gitignore="*.log\n.probe/\n")
    probe_cli("index", "--lexical-only", root=root, env={"PROBE_DAEMON": "0"})
    (root / ".probe" / ".gitignore").unlink()
    probe_cli("status", root=root)
    assert (root / ".probe" / ".gitignore").exists()
    assert (root / ".gitignore").read_text() == "*.log\n.probe/\n"
    assert _git_status(root) == ""
