"""An edit that keeps the file's size and restores its mtime (``touch -r``, ``rsync -t``, a checkout
of a same-size blob) is still indexed: by ``probe index``, by the watcher of a running ``probe mcp``
and by the watcher's polling fallback. Files written within the racy window of a scan are hashed
again at the next one (git's "racy git" answer), and a manifest from before ctime was recorded
migrates to re-verifying every file once."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import time

import anyio

from probe_core.indexing.change_detection import RACY_WINDOW_NS, file_row, is_unchanged
from probe_core.indexing.tree_poll import TreePoll
from probe_core.records import ScannedFile
from probe_core.scan import IgnoreRules
from probe_core.storage.manifest import SCHEMA_VERSION, Manifest

from .conftest import REPO_FILES, probe_cli, probe_mcp, search, tally, wait_indexed, wait_until, write_tree

OLD, NEW = "hash_password", "zorb_password"  # same length: the file keeps its size
TARGET = "src/auth/passwords.py"
NO_DAEMON = {"PROBE_DAEMON": "0"}


def _aged_repo(tmp_path):
    """REPO_FILES in git, every file dated an hour back: outside any racy window, so only the
    stat comparison itself can notice the edit."""
    root = write_tree(tmp_path / "repo", REPO_FILES)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    hour_ago = time.time_ns() - 3600 * 10**9
    for path in root.rglob("*"):
        if ".git" not in path.parts and path.is_file():
            os.utime(path, ns=(hour_ago, hour_ago))
    time.sleep(RACY_WINDOW_NS / 1e9 + 0.2)  # their ctime (set just now) leaves the window too
    return root


def _same_size_edit_keeping_mtime(path) -> None:
    """Rename a function without changing the file's size, then put the old mtime back."""
    before = path.stat()
    text = path.read_text()
    assert OLD in text and NEW not in text
    path.write_text(text.replace(OLD, NEW))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def _found_paths(root, query: str) -> list[str]:
    out = probe_cli("search", query, "--json", root=root, env=NO_DAEMON)
    return [r["path"] for r in json.loads(out.stdout)["results"]]


def test_probe_index_indexes_an_edit_that_keeps_size_and_mtime(tmp_path):
    root = _aged_repo(tmp_path)
    probe_cli("index", "--lexical-only", root=root, env=NO_DAEMON)
    with sqlite3.connect(root / ".probe" / "manifest.sqlite") as db:  # recorded verified: no racy re-hash
        assert 0 not in {row[0] for row in db.execute("SELECT ctime_ns FROM files")}
    _same_size_edit_keeping_mtime(root / TARGET)
    report = json.loads(probe_cli("index", "--lexical-only", "--json", root=root, env=NO_DAEMON).stdout)
    assert report["files_indexed"] == 1, report  # before the fix: 0 indexed, every file "unchanged"
    assert TARGET in _found_paths(root, NEW)
    again = json.loads(probe_cli("index", "--lexical-only", "--json", root=root, env=NO_DAEMON).stdout)
    assert again["files_indexed"] == 0, again  # the new stat is recorded: nothing is redone
    tally("racy.touch_r_edits_indexed")


def test_the_watcher_of_a_running_probe_mcp_catches_it(tmp_path):
    root = _aged_repo(tmp_path)

    async def scenario():
        async with probe_mcp(root) as client:
            await wait_indexed(client)
            _same_size_edit_keeping_mtime(root / TARGET)

            async def found():
                out = await search(client, NEW)
                return any(r["path"] == TARGET and not r["stale"] for r in out["results"])

            await wait_until(found, timeout=60, what="the renamed function to be searchable")

    anyio.run(scenario)
    tally("racy.touch_r_edits_indexed")


def test_the_polling_fallback_sees_it(tmp_path):
    """When inotify's watches run out the watcher polls stats (``TreePoll``): the ctime is in them."""
    root = _aged_repo(tmp_path)
    poll = TreePoll(IgnoreRules(root), lambda: [])
    assert poll.changes() == set()  # the first snapshot
    _same_size_edit_keeping_mtime(root / TARGET)
    assert {path for _change, path in poll.changes()} == {str(root / TARGET)}
    tally("racy.touch_r_edits_indexed")


def test_a_stat_taken_within_the_racy_window_is_not_trusted_next_time(tmp_path):
    """A second write in the same clock tick as the first leaves every stat field as it was; no
    user-space call can stage that on purpose, so the rule is checked on a real file's stat: taken
    just after the file was written it is recorded unverified, and the next scan hashes the file
    even though nothing in its stat moved. Taken later it is trusted."""
    path = tmp_path / "fresh.py"
    path.write_text("x = 1\n")
    scanned = ScannedFile.from_stat("fresh.py", path.stat())
    now = time.time_ns()
    racy_row = file_row(scanned, "h", now)
    assert racy_row.ctime_ns == 0 and not is_unchanged(racy_row, scanned)
    later_row = file_row(scanned, "h", max(scanned.mtime_ns, scanned.ctime_ns) + RACY_WINDOW_NS + 1)
    assert is_unchanged(later_row, scanned)
    future = ScannedFile(scanned.path, scanned.size, now + 3600 * 10**9, scanned.ctime_ns, scanned.inode, scanned.dev)
    assert not is_unchanged(file_row(future, "h", now), future)  # a date in the future is never trusted
    moved = ScannedFile(scanned.path, scanned.size, scanned.mtime_ns, scanned.ctime_ns, scanned.inode + 1, scanned.dev)
    assert not is_unchanged(later_row, moved)  # replaced by another file (an editor's rename-over save)


def test_probe_index_records_racy_files_unverified_and_verifies_them_later(tmp_path):
    """Files written just before a scan: dated 10 s ahead here, so that a slow start on a loaded
    machine cannot age them out of the window before the scan takes their stat."""
    root = write_tree(tmp_path / "repo", REPO_FILES)
    soon = time.time_ns() + 10 * 10**9
    for path in root.rglob("*.*"):
        os.utime(path, ns=(soon, soon))
    probe_cli("index", "--lexical-only", root=root, env=NO_DAEMON)
    with sqlite3.connect(root / ".probe" / "manifest.sqlite") as db:
        assert {row[0] for row in db.execute("SELECT ctime_ns FROM files")} == {0}
    time.sleep(max(0.0, (soon + RACY_WINDOW_NS - time.time_ns()) / 1e9) + 0.2)
    report = json.loads(probe_cli("index", "--lexical-only", "--json", root=root, env=NO_DAEMON).stdout)
    assert report["files_indexed"] == 0 and report["files_unchanged"] == report["files_seen"], report
    with sqlite3.connect(root / ".probe" / "manifest.sqlite") as db:
        assert 0 not in {row[0] for row in db.execute("SELECT ctime_ns FROM files")}


def test_a_manifest_without_ctime_migrates_and_rehashes_each_file_once(tmp_path):
    path = tmp_path / "manifest.sqlite"
    with sqlite3.connect(path) as db:  # the files table of schema version 2
        db.executescript("""
            CREATE TABLE files (path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL,
                file_hash TEXT NOT NULL, language TEXT, chunk_kind TEXT, last_indexed_at REAL NOT NULL,
                last_error TEXT);
            INSERT INTO files VALUES ('a.py', 5, 6, 'abc', 'python', 'code', 1.0, NULL);
        """)
    manifest = Manifest(path)
    row = manifest.files()["a.py"]
    assert (row.mtime_ns, row.size, row.file_hash, row.ctime_ns) == (5, 6, "abc", 0)
    assert not is_unchanged(row, ScannedFile("a.py", 6, 5, 0, 0, 0))  # even an equal-looking stat
    assert manifest.get_meta("schema_version") == str(SCHEMA_VERSION)  # migrated to the current version (4)
    manifest.close()


def test_the_library_registry_follower_sees_a_rewrite_that_keeps_size_and_mtime(tmp_path, monkeypatch):
    """``probe mcp`` re-reads ``libraries.json`` when it changes; it trusted the mtime alone."""
    from probe_core.libraries import registry

    monkeypatch.setenv("PROBE_DATA_DIR", str(tmp_path / "data"))
    path = registry.registry_path()
    path.parent.mkdir(parents=True)
    path.write_text('{"version": 1, "libraries": {"aaaa": {}}}\n')
    assert registry.registry_stamp() is None  # written just now: racy, read it again
    hour_ago = time.time_ns() - 3600 * 10**9
    os.utime(path, ns=(hour_ago, hour_ago))
    time.sleep(RACY_WINDOW_NS / 1e9 + 0.1)  # the ctime too leaves the window
    before = registry.registry_stamp()
    assert before is not None
    path.write_text('{"version": 1, "libraries": {"bbbb": {}}}\n')  # same size
    os.utime(path, ns=(hour_ago, hour_ago))
    time.sleep(RACY_WINDOW_NS / 1e9 + 0.1)
    after = registry.registry_stamp()
    assert after is not None and after != before
