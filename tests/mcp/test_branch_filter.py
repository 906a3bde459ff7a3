"""`search`'s branch filter through the real stdio client on a real repository with two branches,
and a checkout while the server runs (the watcher sees .git/HEAD and the default follows it)."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from probe_core import Workspace, index_workspace

from .conftest import probe_mcp, search, wait_indexed, wait_until

MAIN_A = "def alpha_checksum(data):\n    \"\"\"Adler style checksum of the payload.\"\"\"\n    return sum(data) % 65521\n"
FEATURE_A = ("def zebra_compression(data):\n    \"\"\"Run-length compression of the payload.\"\"\"\n"
             "    return bytes(data)\n")


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"})


def symbols(out: dict, path: str = "a.py") -> set[str]:
    return {r["symbol"] for r in out["results"] if r["path"] == path}


@pytest.mark.asyncio
async def test_branch_filter_and_checkout_while_serving(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text(".probe/\n")
    (root / "a.py").write_text(MAIN_A)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "main")
    git(root, "checkout", "-qb", "feature")
    (root / "a.py").write_text(FEATURE_A)
    git(root, "commit", "-qam", "feature")
    ws = Workspace.open(root)  # the feature branch gets indexed once, then main is checked out
    index_workspace(ws)
    ws.close()
    git(root, "checkout", "-q", "main")

    query = "checksum or compression of the payload"
    async with probe_mcp(root) as client:
        await wait_indexed(client)
        default = await search(client, query, top_k=5)
        assert symbols(default) == {"alpha_checksum"}
        assert all("branches" not in r or r["branches"] is None for r in default["results"])

        feature = await search(client, query, top_k=5, filters={"branch": "feature"})
        hit = next(r for r in feature["results"] if r["path"] == "a.py")
        assert hit["symbol"] == "zebra_compression" and hit["branches"] == ["feature"]
        assert "zebra_compression" in hit["snippet"] and hit["stale"] is False

        every = await search(client, query, top_k=5, filters={"branch": "*"})
        assert symbols(every) == {"alpha_checksum", "zebra_compression"}

        git(root, "checkout", "-q", "feature")  # while the server watches

        async def follows():  # at once from git, then from disk once the rescan revived feature's version
            out = await search(client, query, top_k=5)
            assert symbols(out) <= {"zebra_compression"}, out  # main's version never leaks into the default
            return out if symbols(out) and all(r.get("branches") is None for r in out["results"]) else None

        await wait_until(follows, timeout=60, what="the default branch to follow the checkout")
