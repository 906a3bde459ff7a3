"""A burst of checkouts under a real ``probe mcp`` (MCP SDK stdio client, real git): while the
watcher holds changes that are not indexed yet, every search answer says an index update is pending
(``uncertain``), and once the update is in, the answer is plain again and finds the new code.
It used to answer from the old branch's index with no word of it."""
from __future__ import annotations

import subprocess

import pytest

from .conftest import REPO_FILES, probe_mcp, search, status, tally, wait_indexed, wait_until, write_tree

GIT = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "commit.gpgsign=false"]


def _git(root, *args) -> None:
    subprocess.run([*GIT, "-C", str(root), *args], check=True, capture_output=True)


def _two_branches(tmp_path):
    root = write_tree(tmp_path / "repo", REPO_FILES)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "main")
    _git(root, "checkout", "-qb", "feature")
    for i in range(8):  # enough files that a checkout is a burst of events
        (root / "src" / f"feature_{i}.py").write_text(f"def rotate_signing_key_{i}(vault):\n    return vault.rotate({i})\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "feature")
    _git(root, "checkout", "-q", "main")
    return root


@pytest.mark.asyncio
async def test_searches_during_a_checkout_burst_say_an_update_is_pending(tmp_path):
    root = _two_branches(tmp_path)
    async with probe_mcp(root, PROBE_DEBOUNCE_S="3") as client:
        await wait_indexed(client)
        marked = 0
        for branch in ["feature", "main", "feature", "main", "feature"]:
            _git(root, "checkout", "-q", branch)

            async def seen():
                st = await status(client)
                return st if st["index_update_pending"] else None

            await wait_until(seen, timeout=10, interval=0.05, what="the watcher to see the checkout")
            out = await search(client, "rotate signing key")
            assert out["status"] != "healthy" and out.get("index_update_pending") is True, out
            assert "index update is pending" in out["message"], out["message"]
            marked += 1

        async def settled():
            st = await status(client)
            return st if not st["index_update_pending"] and not st["indexing_in_progress"] else None

        await wait_until(settled, timeout=120, interval=0.25, what="the last checkout to be indexed")
        out = await search(client, "rotate_signing_key_3")
        assert not out.get("index_update_pending") and "pending" not in (out.get("message") or "")
        assert any(r["path"] == "src/feature_3.py" for r in out["results"]), out["results"]
    tally("searches during a checkout burst marked pending", marked)
