"""Messages for situations a user walks into, through real processes: a shell in a deleted
directory, a ``.probeignore`` that ignores everything, ``XDG_DATA_HOME`` pointing at a file, and a
repository moved away while its owner (``probe mcp``, the daemon) runs."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from probe_core.engine.lock import EngineLock, read_owner_info

from .conftest import REPO_FILES, RawServer, probe_cli, tally, write_tree
from .fault_harness import REPO_ROOT


def _in_deleted_dir(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    gone = tmp_path / "gone"
    gone.mkdir()
    script = f'cd "{gone}" && rmdir "{gone}" && exec "$0" -m probe_cli "$@"'
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.run(["sh", "-c", script, sys.executable, *args], capture_output=True, text=True,
                          env=env, stdin=subprocess.DEVNULL, timeout=60)


@pytest.mark.parametrize("verb", [["status"], ["search", "x"], ["mcp"]])
def test_a_deleted_working_directory_is_named_not_an_internal_error(tmp_path, verb):
    out = _in_deleted_dir(tmp_path, *verb)
    assert out.returncode == 1, (out.returncode, out.stderr)  # was 70, "internal error: FileNotFoundError"
    assert "current directory no longer exists" in out.stderr and "internal error" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    tally("messages: deleted working directory")


def test_a_probeignore_that_ignores_everything_is_named(tmp_path):
    root = write_tree(tmp_path / "repo", REPO_FILES)
    (root / ".probeignore").write_text("*\n")
    indexed = probe_cli("index", "--lexical-only", "-q", root=root)
    assert f"ignored by {root / '.probeignore'}" in indexed.stderr, indexed.stderr
    found = json.loads(probe_cli("search", "hash_password", "--json", root=root).stdout)
    assert f"ignored by {root / '.probeignore'}" in found["message"], found["message"]
    assert "run `probe index`" not in found["message"]
    tally("messages: everything ignored")


def test_xdg_data_home_pointing_at_a_file_is_said_at_once(tmp_path):
    root = write_tree(tmp_path / "repo", REPO_FILES)
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    env = {"XDG_DATA_HOME": str(blocker), "PROBE_DATA_DIR": ""}
    probe_cli("index", "--lexical-only", "-q", root=root, env=env)
    st = json.loads(probe_cli("status", "--json", root=root, env=env).stdout)
    assert st["user_data_dir_error"] and str(blocker) in st["user_data_dir_error"], st
    doctor = json.loads(probe_cli("doctor", "--json", root=root, env=env, check=False).stdout)
    checks = {c["name"]: c for c in (doctor["checks"] if isinstance(doctor, dict) else doctor)}
    assert checks["data_dir"]["status"] == "fail" and str(blocker) in checks["data_dir"]["detail"]
    tally("messages: unusable data dir")


def _wait_exit(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:  # our own child: reap it, or it stays a zombie that kill(0) still finds
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return True
        except ChildProcessError:
            pass
        time.sleep(0.2)
    return False


def test_an_mcp_owner_exits_when_its_repository_is_moved_away(tmp_path):
    root = write_tree(tmp_path / "repo", REPO_FILES)
    server = RawServer(root)
    try:
        server.initialize()
        reply = server.request(1, "tools/call", {"name": "index_status", "arguments": {}})
        assert "result" in reply
        moved = tmp_path / "moved"
        root.rename(moved)
        code = server.proc.wait(timeout=90)  # it used to keep running, holding an index nobody could reach
        assert code == 0
        assert EngineLock(moved / ".probe").is_free()
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
    tally("owners exiting when their root is gone")


def test_a_daemon_exits_when_its_repository_is_deleted(tmp_path):
    root = write_tree(tmp_path / "repo", REPO_FILES)
    probe_cli("index", "--background", "--lexical-only", root=root, env={"PROBE_DAEMON": "1", "PROBE_DAEMON_IDLE_S": "600"})
    deadline = time.monotonic() + 60
    while read_owner_info(root / ".probe").get("kind") != "daemon":
        assert time.monotonic() < deadline, "no daemon started"
        time.sleep(0.2)
    pid = read_owner_info(root / ".probe")["pid"]
    shutil.rmtree(root)
    assert _wait_exit(pid, 90), f"the daemon (pid {pid}) kept running on a deleted repository"
    tally("owners exiting when their root is gone")
