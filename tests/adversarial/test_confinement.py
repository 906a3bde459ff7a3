"""Root confinement: no walker (scanner, watcher, library folders) leaves the root or loops, and an
unreadable path never stops the watcher or pauses indexing of the rest.

The defect this started from: a symlink to ``/`` inside the repository sent the watcher over the
whole filesystem (``PermissionError ... /proc/1/task/1/fdinfo``, four restarts, watching given up).
"""
from __future__ import annotations

import json
import os
import queue
import subprocess
import time
from pathlib import Path

import anyio
import pytest

from probe_core.indexing.watcher import ChangeBatch, RepoWatcher, WatchSettings
from probe_core.scan import IgnoreRules, entered_dirs, scan_files, walk_tree

from .conftest import REPO_FILES, probe_mcp, search, shared_tmp, status, tally, wait_indexed, \
    wait_until, write_tree

FAST = WatchSettings(debounce_s=0.6, max_wait_s=10.0, stable_s=0.05, burst_files=200, rescan_s=3600)


def hostile_links(root: Path, outside: Path) -> None:
    """Every way a tree can point out of itself or into itself."""
    outside.mkdir(exist_ok=True)
    (outside / "secret.py").write_text("def outside_secret():\n    return 'leaked'\n")
    (root / "to_root").symlink_to("/", target_is_directory=True)
    (root / "to_outside").symlink_to(outside, target_is_directory=True)
    (root / "src" / "loop").symlink_to("..", target_is_directory=True)  # src/loop/loop/loop/...
    (root / "self").symlink_to(".", target_is_directory=True)
    (root / "a_to_b").symlink_to("b_to_a")
    (root / "b_to_a").symlink_to("a_to_b")  # a two-link cycle
    (root / "secret_link.py").symlink_to(outside / "secret.py")
    (root / "dangling.py").symlink_to(root / "nowhere.py")


def test_the_walk_enters_only_real_directories_inside_the_root(tmp_path):
    root = write_tree(tmp_path / "repo", REPO_FILES)
    hostile_links(root, tmp_path / "outside")
    dirs = entered_dirs(IgnoreRules(root))
    assert set(dirs) == {"", "src", "src/auth", "src/http", "router", "docs", "tests", "config"}
    scan = scan_files(root)
    assert all(not f.path.startswith(("to_root", "to_outside", "self", "src/loop")) for f in scan.files)
    reasons = {s.path: s.reason for s in scan.skipped}
    assert reasons["to_root"] == reasons["to_outside"] == reasons["secret_link.py"] == "symlink_outside_root"
    assert reasons["src/loop"] == reasons["self"] == "symlink_dir"
    assert reasons["a_to_b"] == reasons["b_to_a"] == "unreadable"  # ELOOP
    assert reasons["dangling.py"] == "missing"
    tally("confinement.hostile_links", 8)


def test_a_bind_mount_loop_is_walked_once(tmp_path):
    """A bind mount of an ancestor is no symlink: the walk stops at a directory it already entered."""
    root = write_tree(tmp_path / "repo", {"a.py": "A = 1\n"})
    (root / "mnt").mkdir()
    if subprocess.run(["mount", "--bind", str(root), str(root / "mnt")], capture_output=True).returncode != 0:
        pytest.skip("bind mounts need root and a mount namespace that allows them")
    try:
        files = [f.path for f in scan_files(root).files]
        assert files == ["a.py"]
    finally:
        subprocess.run(["umount", str(root / "mnt")], check=True)


def _watch(root: Path) -> tuple[RepoWatcher, queue.Queue[ChangeBatch]]:
    batches: queue.Queue[ChangeBatch] = queue.Queue()
    w = RepoWatcher(root, batches.put, FAST)
    w.start()
    time.sleep(0.5)
    return w, batches


def _paths_until(batches, wanted: set[str], timeout: float = 15.0) -> set[str]:
    seen: set[str] = set()
    deadline = time.monotonic() + timeout
    while not wanted <= seen and time.monotonic() < deadline:
        try:
            seen |= batches.get(timeout=0.2).paths
        except queue.Empty:
            pass
    return seen


def test_the_watcher_ignores_what_links_point_to_and_follows_new_directories(tmp_path):
    root = write_tree(tmp_path / "repo", REPO_FILES)
    outside = tmp_path / "outside"
    hostile_links(root, outside)
    w, batches = _watch(root)
    try:
        assert w.watched_dirs == set(entered_dirs(IgnoreRules(root)))  # exactly the scanner's directories
        (outside / "secret.py").write_text("changed outside\n")  # seen only through to_outside/
        (outside / "new.py").write_text("x = 1\n")
        (root / "src" / "auth" / "passwords.py").write_text("def f():\n    return 2\n")
        seen = _paths_until(batches, {"src/auth/passwords.py"})
        assert seen == {"src/auth/passwords.py"}
        # a directory tree created after the start is watched at once, files written before its watch
        # existed included; then later writes deep inside it are seen too
        (root / "pkg" / "deep" / "er").mkdir(parents=True)
        (root / "pkg" / "deep" / "er" / "first.py").write_text("A = 1\n")
        assert {"pkg/deep/er/first.py"} <= _paths_until(batches, {"pkg/deep/er/first.py"})
        time.sleep(0.5)
        (root / "pkg" / "deep" / "er" / "later.py").write_text("B = 2\n")
        assert "pkg/deep/er/later.py" in _paths_until(batches, {"pkg/deep/er/later.py"})
        # a directory removed and made again is watched again
        subprocess.run(["rm", "-rf", str(root / "pkg")], check=True)
        time.sleep(1.0)
        (root / "pkg").mkdir()
        time.sleep(0.5)
        (root / "pkg" / "again.py").write_text("C = 3\n")
        assert "pkg/again.py" in _paths_until(batches, {"pkg/again.py"})
        st = w.status()
        assert st["watcher_running"] is True and st["watcher_restarts"] == 0, st
    finally:
        w.stop()


def test_an_ignore_rule_change_rewalks_the_watched_directories(tmp_path):
    root = write_tree(tmp_path / "repo", {**REPO_FILES, "gen/gen.py": "G = 1\n", ".gitignore": "gen/\n"})
    w, batches = _watch(root)
    try:
        assert "gen" not in w.watched_dirs
        (root / ".gitignore").write_text("*.log\n")  # gen/ is source now
        batch = batches.get(timeout=10)
        assert batch.full_scan and batch.reason == "ignore_rules"
        deadline = time.monotonic() + 5
        while "gen" not in w.watched_dirs and time.monotonic() < deadline:
            time.sleep(0.1)
        assert "gen" in w.watched_dirs
        time.sleep(0.5)
        (root / "gen" / "gen.py").write_text("G = 2\n")
        assert "gen/gen.py" in _paths_until(batches, {"gen/gen.py"})
    finally:
        w.stop()


_UNREADABLE = r"""
import json, os, queue, sys, time
sys.path.insert(0, sys.argv[2])
from pathlib import Path
from probe_core.indexing.watcher import RepoWatcher, WatchSettings
from probe_core.scan import scan_files

root = Path(sys.argv[1])
(root / "locked").chmod(0)
(root / "locked_file.py").chmod(0)
scan = scan_files(root)
batches = queue.Queue()
w = RepoWatcher(root, batches.put, WatchSettings(debounce_s=0.5, max_wait_s=10, stable_s=0.05, rescan_s=3600))
w.start()
time.sleep(0.5)
(root / "docs" / "guide.md").write_text("# changed\n")
seen, deadline = set(), time.monotonic() + 15
while "docs/guide.md" not in seen and time.monotonic() < deadline:
    try:
        seen |= batches.get(timeout=0.2).paths
    except queue.Empty:
        pass
st = w.status()
w.stop()
print(json.dumps({"skipped": [[s.path, s.reason] for s in scan.skipped], "files": [f.path for f in scan.files],
                  "seen": sorted(seen), "status": st, "can_read": os.access(root / "locked", os.R_OK)}))
"""


def test_an_unreadable_directory_stops_neither_the_watcher_nor_the_scan(second_user):
    """As a user who cannot read a directory and a file (``nobody`` when the suite runs as root)."""
    prefix = second_user.prefix
    with shared_tmp() as base:
        root = write_tree(base / "repo", {**REPO_FILES, "locked/hidden.py": "H = 1\n", "locked_file.py": "L = 1\n"})
        if prefix:
            subprocess.run(["chown", "-R", "65534:65534", str(base)], check=True)
        proc = subprocess.run(second_user.argv("-c", _UNREADABLE, str(root), second_user.import_root),
                              capture_output=True, text=True, timeout=120, cwd=base,
                              env={**os.environ, **second_user.env})
        assert proc.returncode == 0, proc.stderr[-3000:]
        out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["can_read"] is False
    assert ["locked", "unreadable"] in out["skipped"] and ["locked_file.py", "unreadable"] in out["skipped"]
    assert "src/auth/passwords.py" in out["files"]
    assert "docs/guide.md" in out["seen"]
    assert out["status"]["watcher_running"] is True and out["status"]["watcher_restarts"] == 0
    tally("confinement.unreadable_paths", 2)


def test_symlink_to_slash_under_a_real_probe_mcp(tmp_path):
    """The reported defect, end to end: `probe mcp` on a repository holding a link to `/`, a loop
    and links out. The watcher keeps running with no restart, an edit is searchable, nothing from
    outside is indexed, and indexing never pauses."""
    root = write_tree(tmp_path / "repo", REPO_FILES)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    hostile_links(root, tmp_path / "outside")

    async def scenario():
        async with probe_mcp(root) as client:
            st = await wait_indexed(client)
            assert st["watcher_running"] is True and st["watcher_restarts"] == 0, st
            (root / "src" / "fresh.py").write_text("def quasar_flux_capacitor():\n    return 88\n")

            async def found():
                out = await search(client, "quasar_flux_capacitor")
                return any(r["path"] == "src/fresh.py" for r in out["results"])

            await wait_until(found, timeout=60, what="the new file to be searchable")
            leaked = await search(client, "outside_secret leaked")
            assert not any("secret" in r["path"] for r in leaked["results"])
            await anyio.sleep(2.0)  # the old watcher failed within seconds of starting
            st = await status(client)
            assert st["watcher_running"] is True and st["watcher_restarts"] == 0, st
            assert not st.get("last_error"), st
            assert st.get("backend_reachable") is not False

    anyio.run(scenario)
    log = "\n".join(p.read_text() for p in (tmp_path / "server-logs").glob("*.log"))
    assert "file watcher failed" not in log and "indexing paused" not in log


@pytest.mark.parametrize("swapped", ["a", "a/b"])
def test_a_directory_swapped_for_a_link_mid_walk_is_not_followed(tmp_path, monkeypatch, swapped):
    """Between listing a directory's parent and listing the directory, someone swaps ``a/`` for a
    symlink to a directory outside the root that has the same shape. Whether the swapped directory
    is the one opened next (``a``) or an ancestor of it (``a`` while ``a/b`` is next), the walk must
    not list anything outside the root: the directory it opens must be the one its parent listed."""
    root = write_tree(tmp_path / "repo", {"a/b/c/inside.py": "I = 1\n", "top.py": "T = 1\n"})
    outside = write_tree(tmp_path / "outside", {"b/c/leaked.py": "L = 1\n", "b/leaked.py": "L = 2\n",
                                                "leaked.py": "L = 3\n"})
    parent = os.path.dirname(os.path.join(str(root), swapped))  # the swap comes right after this is listed
    real_scandir = os.scandir
    swaps = []

    class SwapAfterListing:
        def __init__(self, arg):
            self.scan = real_scandir(arg)
            self.path = os.readlink(f"/proc/self/fd/{arg}") if isinstance(arg, int) else os.fspath(arg)

        def __enter__(self):
            return self.scan.__enter__()

        def __exit__(self, *exc):
            out = self.scan.__exit__(*exc)
            if self.path == parent and not swaps:
                os.rename(root / "a", tmp_path / "a-moved")
                (root / "a").symlink_to(outside, target_is_directory=True)
                swaps.append(self.path)
            return out

    monkeypatch.setattr(os, "scandir", SwapAfterListing)
    listings = list(walk_tree(IgnoreRules(root)))
    assert swaps == [parent]
    listed = {entry.rel for listing in listings for entry in listing.entries}
    assert listed <= {"top.py", "a", "a/b", "a/b/c", "a/b/c/inside.py"}, listed  # nothing from outside
    gone = [listing.rel for listing in listings if listing.error is not None]
    assert gone == [swapped]
    tally("confinement.swapped_mid_walk", 1)
