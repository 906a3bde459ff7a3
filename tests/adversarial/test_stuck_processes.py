"""Processes that stop answering, with real signals: SIGINT ends ``probe mcp`` as SIGTERM does
(it used to stop answering and stay), and a CLI call facing a stopped (SIGSTOP) owner answers within
seconds, naming the pid, instead of waiting 120 s in silence."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest

from probe_core.engine.lock import EngineLock

from .conftest import REPO_FILES, RawServer, probe_cli, tally, write_tree


def _status(server: RawServer, rid: int) -> dict:
    reply = server.request(rid, "tools/call", {"name": "index_status", "arguments": {}})
    return reply["result"]["structuredContent"]


def _owner(tmp_path) -> tuple[RawServer, object]:
    root = write_tree(tmp_path / "repo", REPO_FILES)
    server = RawServer(root)
    server.initialize()
    deadline = time.monotonic() + 120
    rid = 0
    while time.monotonic() < deadline:
        rid += 1
        st = _status(server, rid)
        if st.get("first_scan_done"):
            return server, root
        time.sleep(0.3)
    raise AssertionError(f"the first scan did not finish: {st}")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupt_ends_probe_mcp_and_frees_the_index(tmp_path, sig):
    server, root = _owner(tmp_path)
    try:
        server.proc.send_signal(sig)
        code = server.proc.wait(timeout=15)  # it used to keep running, deaf, after SIGINT
        assert code == 0
        assert EngineLock(root / ".probe").is_free()  # the owner lock went with it
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
    tally(f"probe mcp exits on {signal.Signals(sig).name}")


def test_a_stopped_owner_gets_a_prompt_answer_naming_its_pid(tmp_path):
    server, root = _owner(tmp_path)
    pid = server.proc.pid
    env = {"PROBE_OWNER_PING_S": "2"}
    os.kill(pid, signal.SIGSTOP)
    try:
        # timeout=60: each call used to wait PROBE_RPC_TIMEOUT_S (120 s) on the stopped owner
        st = probe_cli("status", "--json", root=root, env=env, timeout=60)  # exits 0: answered here
        out = json.loads(st.stdout)
        assert out["owner_responding"] is False and out["owner_pid"] == pid
        assert f"pid {pid}" in out["last_error"] and "did not answer" in out["last_error"]
        assert out["files_indexed"] == len(REPO_FILES)  # read from the manifest, read-only
        found = probe_cli("search", "hash_password", root=root, env=env, timeout=60, check=False)
        assert found.returncode == 1
        assert f"pid {pid}" in found.stderr and "kill -CONT" in found.stderr, found.stderr
        assert len(found.stderr.strip().splitlines()) == 1
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"a CLI call waited on the stopped owner: {exc}") from exc
    finally:
        os.kill(pid, signal.SIGCONT)
        server.close()
    tally("stopped owners answered around")
