"""Hostile trees at scale: 20,000 tiny files, a 50 MB file, a 5 MB single-line file, binaries with
source extensions, names that are not UTF-8, a FIFO, 500 levels of nesting. Indexing finishes, its
memory stays bounded (peak RSS reported), every file left out is listed with its reason in
`probe status`, and the watcher runs over the tree.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import anyio

from .conftest import REPO_ROOT, probe_cli, probe_mcp, search, status, tally, wait_until
from .fault_harness import build_hostile_tree

TINY_FILES = int(os.environ.get("PROBE_TINY_FILES", "20000"))
DEPTH = 500
RSS_CEILING_MB = 1024  # a guard against unbounded growth; the figure itself is in docs/reliability.md

_PEAK_RSS = r"""
import resource, subprocess, sys
rc = subprocess.run(sys.argv[1:]).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024, rc)
"""


def test_a_hostile_tree_indexes_with_bounded_memory_and_clear_skips(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    expected_skips = build_hostile_tree(root, TINY_FILES, DEPTH)
    proc = subprocess.run([sys.executable, "-c", _PEAK_RSS, sys.executable, "-m", "probe_cli", "index",
                           "--lexical-only", "--root", str(root)], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=900)
    peak_mb, rc = map(int, proc.stdout.strip().splitlines()[-1].split())
    assert rc == 0, proc.stderr[-2000:]
    print(f"peak RSS of `probe index --lexical-only` over {TINY_FILES + 10} files: {peak_mb} MB")
    assert peak_mb < RSS_CEILING_MB
    st = json.loads(probe_cli("status", "--json", root=root).stdout)
    skipped = {e["path"]: e["reason"] for e in st["skipped"]["examples"]}
    for path, reason in expected_skips.items():
        assert skipped.get(path) == reason, (path, reason, st["skipped"])
    assert st["files_indexed"] == TINY_FILES + 3  # the tiny files, latin1.py, edge.py, the leaf 500 levels down
    text = probe_cli("status", root=root).stdout
    assert "skipped:" in text and "too_large" in text and "undecodable_name" in text
    found = json.loads(probe_cli("search", "bottom_of_the_abyss", "--json", root=root).stdout)
    assert found["results"][0]["path"] == "deep/" + "d/" * DEPTH + "leaf.py"
    tally("hostile.files", TINY_FILES + 10)
    tally("hostile.peak_rss_mb", peak_mb)

    async def watched():
        async with probe_mcp(root) as client:
            async def ready():
                st = await status(client)
                return st if st.get("first_scan_done") and st["watcher_running"] else None

            st = await wait_until(ready, timeout=300, what="the first scan under probe mcp")
            assert st["watcher_restarts"] == 0
            leaf = root.joinpath("deep", *["d"] * DEPTH, "leaf.py")
            leaf.write_text("def renamed_abyss_floor():\n    return 'deeper'\n")

            async def seen():
                out = await search(client, "renamed_abyss_floor")
                return out["results"] and out["results"][0]["path"].endswith("leaf.py")

            await wait_until(seen, timeout=120, what="the edit 500 levels down to be indexed")
            st = await status(client)
            assert st["watcher_running"] is True and st["watcher_restarts"] == 0

    anyio.run(watched)
