"""The file watcher on real directories (inotify through watchfiles), with short timers."""
from __future__ import annotations

import queue
import subprocess
import time
from pathlib import Path

import pytest

from probe_core.indexing.watcher import ChangeBatch, RepoWatcher, WatchSettings

# Debounce well above the gaps between the writes a test makes, so a loaded machine cannot split
# one logical change into two batches.
FAST = WatchSettings(debounce_s=1.0, max_wait_s=10.0, stable_s=0.05, burst_files=20, rescan_s=3600)


def start(root: Path, settings: WatchSettings = FAST) -> tuple[RepoWatcher, queue.Queue[ChangeBatch]]:
    batches: queue.Queue[ChangeBatch] = queue.Queue()
    w = RepoWatcher(root, batches.put, settings)
    w.start()
    time.sleep(0.3)  # let inotify register the tree
    return w, batches


def next_batch(batches, timeout: float = 10.0) -> ChangeBatch:
    return batches.get(timeout=timeout)


def no_batch(batches, within: float) -> bool:
    try:
        batches.get(timeout=within)
    except queue.Empty:
        return True
    return False


def test_trailing_debounce_coalesces_and_ignores(repo):
    w, batches = start(repo)
    try:
        (repo / "node_modules" / "lib").mkdir(parents=True)
        (repo / "node_modules" / "lib" / "x.js").write_text("ignored")
        (repo / ".probe").mkdir(exist_ok=True)
        (repo / ".probe" / "noise.txt").write_text("ignored")
        (repo / "src" / "auth" / "passwords.py").write_text("def f():\n    return 1\n")
        time.sleep(0.2)  # inside the debounce window: same batch
        (repo / "docs" / "new.md").write_text("# New\n")
        batch = next_batch(batches)
        assert not batch.full_scan and batch.reason == "changes"
        assert batch.paths == {"src/auth/passwords.py", "docs/new.md"}
        assert no_batch(batches, 1.0)  # ignored paths never produce a batch
        (repo / "docs" / "new.md").unlink()
        assert next_batch(batches).paths == {"docs/new.md"}
        assert w.status()["watcher_running"] is True
    finally:
        w.stop()


def test_burst_becomes_one_full_scan_and_git_head_too(repo):
    w, batches = start(repo)
    try:
        for i in range(50):  # a checkout touching many files
            (repo / "pkg" / f"m{i}.py").parent.mkdir(exist_ok=True)
            (repo / "pkg" / f"m{i}.py").write_text(f"X = {i}\n")
        batch = next_batch(batches)
        assert batch.full_scan and batch.reason == "burst"
        assert no_batch(batches, 1.0)
        subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-b", "feature"], check=True)
        batch = next_batch(batches)
        assert batch.full_scan and batch.reason == "git_head"
        (repo / ".gitignore").write_text("*.log\n")
        assert next_batch(batches).reason == "ignore_rules"
    finally:
        w.stop()


def test_unstable_file_postpones_the_batch(repo):
    w, batches = start(repo, WatchSettings(debounce_s=0.3, max_wait_s=20, stable_s=0.3, burst_files=20, rescan_s=3600))
    try:
        target = repo / "big.txt"
        t0 = time.monotonic()
        with target.open("w") as fh:  # a slow writer: a line every 0.2 s for 2 s
            for i in range(10):
                fh.write(f"line {i}\n")
                fh.flush()
                time.sleep(0.2)
        batch = next_batch(batches)
        assert batch.paths == {"big.txt"}
        assert time.monotonic() - t0 >= 2.0  # not flushed while the file kept growing
    finally:
        w.stop()


def test_max_wait_flushes_a_never_quiet_stream(repo):
    w, batches = start(repo, WatchSettings(debounce_s=1.0, max_wait_s=1.5, stable_s=0, burst_files=50, rescan_s=3600))
    try:
        t0 = time.monotonic()
        got = None
        for i in range(40):  # an event every 0.1 s: the trailing debounce alone would never fire
            (repo / f"f{i % 3}.txt").write_text(str(i))
            time.sleep(0.1)
            try:
                got = batches.get_nowait()
                break
            except queue.Empty:
                pass
        assert got is not None and time.monotonic() - t0 < 6
    finally:
        w.stop()


def test_periodic_rescan(repo):
    w, batches = start(repo, WatchSettings(debounce_s=0.3, max_wait_s=5, stable_s=0, burst_files=20, rescan_s=1.0))
    try:
        batch = next_batch(batches, timeout=5)
        assert batch.full_scan and batch.reason == "periodic"
    finally:
        w.stop()


def test_watcher_gives_up_after_three_restarts(tmp_path):
    root = tmp_path / "gone"
    root.mkdir()
    batches: queue.Queue[ChangeBatch] = queue.Queue()
    w = RepoWatcher(root, batches.put, FAST)
    root.rmdir()  # watching a root that is not there fails every time
    w.start()
    deadline = time.monotonic() + 15
    while w.running and time.monotonic() < deadline:
        time.sleep(0.1)
    st = w.status()
    assert st["watcher_running"] is False and st["watcher_restarts"] == 4
    assert "gone" in st["watcher_error"]
    w.stop()


def test_checkout_in_a_linked_worktree_is_a_git_head_full_scan(repo, tmp_path):
    """In a linked worktree `.git` is a file and HEAD lives in <main>/.git/worktrees/<name>,
    outside the root: the watcher watches it too, so a checkout there is seen."""
    def git(*args, cwd=repo):
        subprocess.run(["git", "-C", str(cwd), "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
                       check=True, capture_output=True)

    git("add", "-A")
    git("commit", "-qm", "init")
    wt = tmp_path / "wt"
    git("worktree", "add", "-q", "-b", "wt-branch", str(wt))
    assert (wt / ".git").is_file()
    w, batches = start(wt)
    try:
        (wt / "docs" / "wt.md").write_text("# In the worktree\n")
        batch = next_batch(batches)
        assert not batch.full_scan and batch.paths == {"docs/wt.md"}
        git("checkout", "-q", "-b", "feature", cwd=wt)  # only HEAD changes, no file under the root
        batch = next_batch(batches)
        assert batch.full_scan and batch.reason == "git_head"
        # a checkout in the main repository is not this worktree's
        git("checkout", "-q", "-b", "elsewhere")
        assert no_batch(batches, 2.0)
        assert w.status()["watcher_running"] is True
    finally:
        w.stop()


@pytest.mark.parametrize("rel", ["../outside.txt", "/etc/passwd"])
def test_paths_outside_the_root_are_never_accepted(repo, rel):
    w = RepoWatcher(repo, lambda b: None, FAST)
    assert w._accept(None, str((repo / rel) if not rel.startswith("/") else Path(rel))) is False
