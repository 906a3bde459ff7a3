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
from pathlib import Path

import anyio

from .conftest import REPO_ROOT, probe_cli, probe_mcp, search, status, tally, wait_until

TINY_FILES = int(os.environ.get("PROBE_TINY_FILES", "20000"))
DEPTH = 500
RSS_CEILING_MB = 1024  # a guard against unbounded growth; the figure itself is in docs/reliability.md

_PEAK_RSS = r"""
import resource, subprocess, sys
rc = subprocess.run(sys.argv[1:]).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024, rc)
"""


def build_hostile_tree(root: Path) -> dict[str, str]:
    """Write the tree; returns {path: the reason it must be skipped for}."""
    for i in range(TINY_FILES):
        d = root / "many" / f"d{i // 100:03d}"
        if i % 100 == 0:
            d.mkdir(parents=True)
        (d / f"f{i % 100:02d}.py").write_text(f"VALUE_{i} = {i}\n")
    expected = {}
    (root / "data").mkdir()
    with open(root / "data" / "huge.txt", "wb") as fh:  # 50 MB of text lines
        line = b"the quick brown fox jumps over the lazy dog " * 2 + b"\n"
        fh.write(line * (50 * 2**20 // len(line) + 1))
    expected["data/huge.txt"] = "too_large"
    (root / "oneline").mkdir()
    (root / "oneline" / "bundle.py").write_bytes(b"x=1;" * (5 * 2**20 // 4))  # 5 MB, no newline
    expected["oneline/bundle.py"] = "too_large"
    # just under the 1 MB cap, one line of a million characters: indexed (the worst case for memory:
    # the symbol graph holds a reference per statement)
    (root / "oneline" / "edge.py").write_bytes(b"x=1;" * (999_000 // 4))
    (root / "bin").mkdir()
    (root / "bin" / "image.py").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + os.urandom(4096))
    (root / "bin" / "program.c").write_bytes(b"\x7fELF\x02\x01\x01\0" + bytes(range(256)) * 16)
    (root / "bin" / "utf16.ts").write_bytes("export const x = 1;\n".encode("utf-16"))
    expected.update({"bin/image.py": "binary", "bin/program.c": "binary", "bin/utf16.ts": "binary"})
    (root / "bin" / "latin1.py").write_bytes(b"name = 'caf\xe9'\n")  # not UTF-8 inside: indexed, decoded
    names = os.fsencode(root / "names")
    os.mkdir(names)
    with open(os.path.join(names, b"caf\xe9.py"), "w") as fh:
        fh.write("A = 1\n")
    os.mkdir(os.path.join(names, b"\xff\xfe"))
    with open(os.path.join(names, b"\xff\xfe", b"inner.py"), "w") as fh:
        fh.write("B = 2\n")
    expected["names/caf\ufffd.py"] = expected["names/\ufffd\ufffd"] = "undecodable_name"
    os.mkfifo(root / "pipe.py")
    expected["pipe.py"] = "not_regular_file"
    deep = root.joinpath("deep", *["d"] * DEPTH)
    deep.mkdir(parents=True)
    (deep / "leaf.py").write_text("def bottom_of_the_abyss():\n    return 'deep'\n")
    return expected


def test_a_hostile_tree_indexes_with_bounded_memory_and_clear_skips(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    expected_skips = build_hostile_tree(root)
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
