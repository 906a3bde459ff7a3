"""The workspace registry and `probe prune`, end to end: two real `probe mcp` servers (the MCP SDK's
stdio client) register their workspaces on start; one goes stale and `probe prune` (a subprocess)
deletes its index while the other keeps answering."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from probe_core.engine.lock import EngineLock
from probe_core.registry import Registry

from .conftest import probe_mcp, search, wait_indexed, wait_until

DAY = 86400.0
OTHER_FILES = {
    "lib/throttle.py": '''import threading


class Throttle:
    """Limit how many requests run at the same time with a semaphore."""

    def __init__(self, limit: int):
        self._sem = threading.BoundedSemaphore(limit)

    def __enter__(self):
        self._sem.acquire()
        return self

    def __exit__(self, *exc):
        self._sem.release()
''',
    "README.md": "# Throttle\n\nA tiny concurrency limiter.\n",
}


def other_repo(base: Path) -> Path:
    root = base / "other"
    for rel, text in OTHER_FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, "utf-8")
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    return root


def probe_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "probe_cli", *args], capture_output=True, text=True, timeout=120,
                          cwd=str(Path(__file__).resolve().parents[2]), env=dict(os.environ))


def config_id(root: Path) -> str:
    return json.loads((root / ".probe" / "config.json").read_text())["workspace_id"]


async def wait_lock_free(root: Path) -> None:
    lock = EngineLock(root / ".probe")

    async def free():
        return lock.is_free()

    await wait_until(free, timeout=30, interval=0.1, what=f"the server of {root} to exit")


@pytest.mark.asyncio
async def test_prune_two_workspaces_through_real_servers(repo, tmp_path):
    other = other_repo(tmp_path)
    async with probe_mcp(repo) as client:  # stays up throughout: the fresh, in-use workspace
        await wait_indexed(client)
        async with probe_mcp(other) as stale_client:
            await wait_indexed(stale_client)
            hits = (await search(stale_client, "limit concurrent requests with a semaphore"))["results"]
            assert hits and hits[0]["path"] == "lib/throttle.py"

            # both registered on start
            records = {r.workspace_id: r for r in Registry().list()}
            assert set(records) == {config_id(repo), config_id(other)}
            assert records[config_id(other)].root == str(other.resolve())
            assert all(r.backend == "edge" and r.preset == "embedded" for r in records.values())
            assert all(time.time() - r.last_seen_at < 3600 for r in records.values())
        await wait_lock_free(other)

        # nothing is older than 30 days yet
        out = probe_cli("prune", "--older-than", "30d", "--json")
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout) == []

        # `other` was last seen 40 days ago
        Registry().set_last_seen(config_id(other), time.time() - 40 * DAY)
        dry = probe_cli("prune", "--older-than", "30d", "--dry-run")
        assert dry.returncode == 0, dry.stderr
        assert "would delete" in dry.stdout and str(other.resolve()) in dry.stdout
        assert str(repo.resolve()) not in dry.stdout
        assert (other / ".probe" / "store").is_dir()  # dry run: still there

        out = probe_cli("prune", "--older-than", "30d", "--json")
        assert out.returncode == 0, out.stderr
        [entry] = json.loads(out.stdout)
        assert (entry["workspace_id"], entry["action"], entry["applied"]) == (config_id(other), "delete", True)
        assert entry["points"] > 0 and entry["bytes"] > 0
        assert not (other / ".probe" / "store").exists()
        assert not list((other / ".probe").glob("manifest.sqlite*"))
        assert (other / ".probe" / "config.json").exists() and (other / "lib" / "throttle.py").exists()
        assert [r.workspace_id for r in Registry().list()] == [config_id(repo)]

        # the other workspace is untouched and still answers through its running server
        hits = (await search(client, "hash a password with a salt"))["results"]
        assert hits and hits[0]["path"] == "src/auth/passwords.py"
        assert (repo / ".probe" / "manifest.sqlite").exists()

        # made stale too, it is skipped while its server holds the workspace
        Registry().set_last_seen(config_id(repo), time.time() - 40 * DAY)
        out = probe_cli("prune", "--older-than", "30d", "--json")
        [entry] = json.loads(out.stdout)
        assert entry["workspace_id"] == config_id(repo) and entry["action"] == "skip"
        assert entry["reason"].startswith("in use") and not entry["applied"]
        hits = (await search(client, "hash a password with a salt"))["results"]
        assert hits and hits[0]["path"] == "src/auth/passwords.py"

    # the pruned workspace re-indexes from scratch on its next use, under the same id, and registers again
    async with probe_mcp(other) as client:
        await wait_indexed(client)
        hits = (await search(client, "limit concurrent requests with a semaphore"))["results"]
        assert hits and hits[0]["path"] == "lib/throttle.py"
        assert Registry().get(config_id(other)) is not None
