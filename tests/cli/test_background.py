"""`probe index --background`, the background owner (daemon), `probe stop`, and CLI verbs answered
through a running owner. Real subprocesses, the real model and store, real signals."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from probe_core import Workspace
from probe_core.engine.daemon import owner_ping
from probe_core.engine.lock import EngineLock
from probe_core.indexing.indexer import IndexReport

from ..indexing.polling import polling
from ..indexing.test_crash_recovery import _count, make_repo
from ..indexing.test_indexer import assert_exact
from ..registry.test_heartbeat import wait_for

PROBE = [sys.executable, "-m", "probe_cli"]


def probe(root: Path, *args: str, timeout: float = 300, **env: str) -> subprocess.CompletedProcess:
    # capture_output waits for EOF on both pipes: a daemon that inherited them would hang this call
    return subprocess.run([*PROBE, *args, "--root", str(root)], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **env})


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # a zombie (exited, not reaped by its parent) counts as gone
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split(")")[-1].split()[0] == "Z"


def check_exact(root: Path) -> dict:
    """With no owner left: store == manifest == the files' chunks; returns the manifest counts."""
    lock = EngineLock(root / ".probe")
    wait_for(lock.try_acquire, timeout=30, what="the workspace lock")
    try:
        ws = Workspace.open(root, create=False)
        try:
            assert_exact(ws)
            assert ws.manifest.get_meta("index_dirty") == "0"
            return ws.manifest.counts()
        finally:
            ws.close()
    finally:
        lock.release()


def test_background_answers_at_once_then_wait_completes_and_stop_ends_it(tmp_path):
    root = make_repo(tmp_path / "repo", 120)
    (root / "types.py").write_text("raise SystemExit('the stdlib was shadowed')\n")  # the daemon runs in root
    t0 = time.monotonic()
    out = probe(root, "index", "--background", "--json", PROBE_DAEMON="1")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["background"] is True and report["owner_kind"] == "daemon"
    assert report["files_indexed"] == 121 and out.stderr == ""  # not a terminal: no progress
    daemon = report["owner_pid"]
    assert daemon != os.getpid() and owner_ping(root)["pid"] == daemon
    print(f"\n--background returned after {time.monotonic() - t0:.1f} s")

    # every chunk is searchable lexically now, while dense vectors are still being made
    st = json.loads(probe(root, "status", "--json").stdout)
    assert st["role"] == "attached" and st["owner_pid"] == daemon and st["owner_kind"] == "daemon"
    assert st["chunks_indexed"] == report["chunks_indexed"] and st["chunks_embedded"] < st["chunks_indexed"]
    hits = json.loads(probe(root, "search", "Worker17 compute_17 LIMIT_17", "--json").stdout)["results"]
    # the lexical side has it first; the fused order still moves while dense vectors fill in
    assert [h["path"] for h in hits if h["signals"]["bm25_rank"] == 1] == ["pkg7/mod_17.py"]

    out = probe(root, "index", "--wait", "--json")
    assert out.returncode == 0, out.stderr
    done = json.loads(out.stdout)
    assert done["owner_pid"] == daemon and done["dense_coverage"] == 1.0 and done["files_unchanged"] == 121
    # the same report as an index run in this process, counting what was embedded during the wait
    assert set(IndexReport.__slots__) <= set(done) and done["errors"] == [] and done["files_failed"] == 0
    assert 0 <= done["chunks_embedded"] <= st["chunks_indexed"] - st["chunks_embedded"]
    st = json.loads(probe(root, "status", "--json").stdout)
    assert st["indexing_in_progress"] is False and st["chunks_embedded"] == st["chunks_indexed"]

    out = probe(root, "stop")
    assert out.returncode == 0 and f"stopped the Probe daemon (pid {daemon})" in out.stdout
    assert EngineLock(root / ".probe").is_free()
    wait_for(lambda: gone(daemon), timeout=10, what="the daemon to exit")
    assert "no Probe daemon runs" in probe(root, "stop").stdout
    counts = check_exact(root)
    assert counts["chunks_dense"] == counts["chunks"]


def test_kill_9_of_the_background_owner_mid_dense_then_index_is_exact(tmp_path):
    root = make_repo(tmp_path / "repo", 60)
    out = probe(root, "index", "--background", "--json", PROBE_DAEMON="1")
    assert out.returncode == 0, out.stderr
    daemon = json.loads(out.stdout)["owner_pid"]
    db = root / ".probe" / "manifest.sqlite"
    embedded = "SELECT COUNT(*) FROM chunks WHERE has_dense=1"
    wait_for(lambda: _count(db, embedded) >= 32, timeout=120, what="dense vectors")
    os.kill(daemon, signal.SIGKILL)
    wait_for(lambda: gone(daemon), timeout=10, what="the daemon to die")
    ws = Workspace.open(root)
    try:
        counts = ws.manifest.counts()
        assert 0 < counts["chunks_dense"] < counts["chunks"], counts  # killed mid-dense
    finally:
        ws.close()

    out = probe(root, "index", "--json")  # blocking, in this process: the lock died with the daemon
    assert out.returncode == 0, out.stderr
    assert "owner_pid" not in json.loads(out.stdout)
    counts = check_exact(root)
    assert counts["chunks_dense"] == counts["chunks"]
    ws = Workspace.open(root)
    try:
        assert ws.store.count(with_dense=True) == counts["chunks"] and ws.manifest.pending_dense(10) == []
    finally:
        ws.close()


def test_daemon_exits_when_idle(repo):
    # the watcher's periodic rescan (every 1 s here) finds nothing to do: that is not work
    out = probe(repo, "index", "--background", "--json", PROBE_DAEMON_IDLE_S="3", PROBE_RESCAN_S="1", PROBE_DAEMON="1")
    assert out.returncode == 0, out.stderr
    daemon = json.loads(out.stdout)["owner_pid"]
    # it stays while it works (dense vectors), then leaves on its own
    # its lock goes when its last thread does (the process may show as a zombie a moment before)
    wait_for(lambda: gone(daemon) and EngineLock(repo / ".probe").is_free(), timeout=120,
             what="the idle daemon to exit")
    log = (repo / ".probe" / "logs" / "probe-daemon.log").read_text()
    assert "exits after 3 s idle" in log and "idle for" in log
    counts = check_exact(repo)
    assert counts["chunks_dense"] == counts["chunks"]


LEAN_CHECK = """
import json, sys
from probe_cli.main import main
rc = main(sys.argv[1:])
heavy = [m for m in ("onnxruntime", "qdrant_edge", "tree_sitter", "watchfiles", "probe_core.workspace", "rich")
         if m in sys.modules]
print(json.dumps({"rc": rc, "heavy": heavy}), file=sys.stderr)
"""


def lean_cli(root: Path, *args: str, as_json: bool = True) -> tuple[dict | str, dict]:
    """Run a CLI verb (stdout piped); return its answer (JSON, or the plain text) and which heavy
    modules the process loaded."""
    out = subprocess.run([sys.executable, "-c", LEAN_CHECK, *args, "--root", str(root),
                          *(["--json"] if as_json else [])], capture_output=True, text=True, timeout=120)
    return json.loads(out.stdout) if as_json else out.stdout, json.loads(out.stderr.strip().splitlines()[-1])


def test_cli_verbs_go_through_a_running_owner(repo):
    """A cold CLI call answers by itself and starts the background owner; the next calls are answered
    by that owner, identically, without loading the model, the store or the parsers."""
    queries = [("search", "hash a password with a salt", "--top-k", "5"), ("callers", "hash_password"),
               ("map", "src"), ("impls", "HeaderParser")]
    assert probe(repo, "index", "-q").returncode == 0
    cold = {}
    for args in queries:
        answer, process = lean_cli(repo, *args)
        assert process["rc"] == 0 and "probe_core.workspace" in process["heavy"], args  # answered here
        cold[args[0]] = answer
    assert owner_ping(repo) is None  # PROBE_DAEMON=0 (the suite's default): nothing was started

    out = probe(repo, "search", "hash a password", "--json", PROBE_DAEMON="1")
    assert out.returncode == 0, out.stderr
    daemon = wait_for(lambda: owner_ping(repo), timeout=60, what="the background owner the search started")
    assert daemon["kind"] == "daemon"
    assert probe(repo, "index", "--wait", "-q").returncode == 0  # its own first scan (nothing changed)
    for args in queries:
        answer, process = lean_cli(repo, *args)
        assert process == {"rc": 0, "heavy": []}, args
        if args[0] == "search":  # the same results; the owner's generation moved on by its scan
            answer, cold_answer = answer["results"], cold["search"]["results"]
        else:
            cold_answer = cold[args[0]]
        assert answer == cold_answer, args
    st, process = lean_cli(repo, "status")
    assert process["heavy"] == [] and st["role"] == "attached" and st["owner_pid"] == daemon["pid"]
    # the human answers, piped (an agent's shell), are plain text: no rich, no model, no store either
    text, process = lean_cli(repo, "search", "hash a password with a salt", "--top-k", "5", as_json=False)
    first = cold["search"]["results"][0]
    assert process == {"rc": 0, "heavy": []} and f" 1. {first['path']}#L{first['start_line']}-L" in text
    text, process = lean_cli(repo, "status", as_json=False)
    assert process == {"rc": 0, "heavy": []} and f"owner                  Probe daemon pid {daemon['pid']}" in text

    # what this shell asks for reaches the owner, or the answer says it could not
    note = probe(repo, "search", "hash a password", "--json", QDRANT_URL="http://127.0.0.1:9")
    assert note.returncode == 0 and f"the running Probe daemon (pid {daemon['pid']}) started with other " \
        "settings than this shell's (QDRANT_URL or config.json differ)" in note.stderr
    assert "note:" not in probe(repo, "search", "hash a password", "--json").stderr
    bad = probe(repo, "search", "hash a password", PROBE_RPC_TIMEOUT_S="abc")
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "PROBE_RPC_TIMEOUT_S='abc'" in bad.stderr
    lsp = json.loads(probe(repo, "callers", "hash_password", "--json", PROBE_LSP="1").stdout)
    graph = json.loads(probe(repo, "callers", "hash_password", "--json").stdout)
    assert lsp["source"] == "lsp" and graph["source"] == "treesitter"

    assert probe(repo, "stop").returncode == 0
    answer, process = lean_cli(repo, "search", "hash a password with a salt", "--top-k", "5")
    assert "probe_core.workspace" in process["heavy"]  # no owner any more: cold again, same answer
    assert answer["results"] == cold["search"]["results"]


def test_index_background_errors_are_one_line(tmp_path):
    out = probe(tmp_path / "missing", "index", "--background")
    assert out.returncode == 1 and out.stderr.startswith("probe: error:") and "not a directory" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    out = subprocess.run([*PROBE, "index", "--background", "--wait"], capture_output=True, text=True)
    assert out.returncode == 2 and "not allowed with argument" in out.stderr


@pytest.mark.parametrize("columns", [80])
def test_progress_on_a_terminal_only(tmp_path, columns):
    """`probe index` on a terminal draws files/chunks progress with rates within the width; piped,
    it prints the report alone."""
    root = make_repo(tmp_path / "repo", 30)
    piped = probe(root, "index", "--lexical-only")
    assert piped.returncode == 0 and piped.stderr == "" and piped.stdout.startswith("indexed 30 files")
    (root / "pkg0" / "mod_0.py").write_text("def changed():\n    return 2\n")
    cmd = " ".join([*PROBE, "index", "--root", str(root)])
    tty = subprocess.run(["script", "-qec", cmd, "/dev/null"], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "COLUMNS": str(columns), "LINES": "24", "TERM": "xterm"})
    assert tty.returncode == 0, tty.stdout[-2000:]
    screen = tty.stdout
    for label in ("files", "chunks lexical", "chunks dense", "/s"):
        assert label in screen, label
    import re

    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen)
    lines = [ln for chunk in plain.split("\r") for ln in chunk.split("\n")]
    assert max(len(ln) for ln in lines) <= columns


@pytest.mark.asyncio
async def test_stop_leaves_an_editors_server_alone_and_a_server_outlives_the_daemon(repo):
    """`probe stop` refuses a `probe mcp` owner; a `probe mcp` started while the daemon owns the
    workspace attaches to it and takes the index over when `probe stop` ends the daemon."""
    import anyio

    from ..mcp.conftest import probe_mcp, search, status, wait_until

    out = probe(repo, "index", "--background", "--json", PROBE_DAEMON="1")
    assert out.returncode == 0, out.stderr
    daemon = json.loads(out.stdout)["owner_pid"]
    async with probe_mcp(repo) as client:
        st = await status(client)
        assert st["role"] == "attached" and st["owner_pid"] == daemon and st["owner_kind"] == "daemon"
        stopped = await anyio.to_thread.run_sync(lambda: probe(repo, "stop"))
        assert stopped.returncode == 0 and f"pid {daemon}" in stopped.stdout

        async def owner():
            return (await status(client))["role"] == "owner"

        await wait_until(owner, timeout=60, what="the server to take over")
        hits = await search(client, "hash a password with a salt", top_k=3)
        assert hits["results"][0]["path"] == "src/auth/passwords.py"
        refused = await anyio.to_thread.run_sync(lambda: probe(repo, "stop"))
        assert refused.returncode == 1 and "owned by probe mcp" in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1


def test_stop_returns_when_another_process_takes_the_lock_over_at_once(repo):
    """An attached `probe mcp` takes the lock the moment the daemon exits: `probe stop` waits for the
    daemon's process, not for a free lock it may never see (CI once waited 30 s and failed)."""
    import threading

    out = probe(repo, "index", "--background", "--json", PROBE_DAEMON="1")
    assert out.returncode == 0, out.stderr
    daemon = json.loads(out.stdout)["owner_pid"]
    successor = EngineLock(repo / ".probe")
    took_over = threading.Event()

    def take_over() -> bool:
        if not successor.try_acquire():
            return False
        took_over.set()
        return True
    with polling(take_over):
        stopped = probe(repo, "stop", timeout=60)
    try:
        assert took_over.is_set() and gone(daemon)
        assert stopped.returncode == 0 and f"pid {daemon}" in stopped.stdout, stopped.stderr
    finally:
        successor.release()


def test_rebuild_stops_the_background_owner_first(repo):
    out = probe(repo, "index", "--background", "--json", PROBE_DAEMON="1")
    assert out.returncode == 0, out.stderr
    daemon = json.loads(out.stdout)["owner_pid"]
    out = probe(repo, "index", "--rebuild", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert "owner_pid" not in report and report["files_indexed"] == 6  # rebuilt here, from nothing
    assert wait_for(lambda: gone(daemon), timeout=10, what="the daemon to exit")
    counts = check_exact(repo)
    assert counts["chunks_dense"] == counts["chunks"]


def test_an_index_the_daemon_cannot_use_is_one_line_and_the_daemon_leaves(repo):
    """An index built with another model: `--background` says so at once (it would otherwise wait for
    a scan that never starts), and the daemon, retrying for nobody, exits when idle."""
    assert probe(repo, "index", "--lexical-only", "-q").returncode == 0
    ws = Workspace.open(repo)
    try:
        ws.manifest.set_meta("embedding_model_id", "another/model")
    finally:
        ws.close()
    t0 = time.monotonic()
    out = probe(repo, "index", "--background", PROBE_DAEMON_IDLE_S="2", PROBE_DAEMON="1")
    assert out.returncode == 1 and "probe index --rebuild" in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and time.monotonic() - t0 < 60
    wait_for(lambda: EngineLock(repo / ".probe").is_free(), timeout=60, what="the daemon to give up")


def test_probe_daemon_0_means_the_cli_starts_no_owner(repo):
    """``PROBE_DAEMON=0`` (issue 19: the README read as "no daemon", yet `--background` still started
    one): the CLI starts no background owner, neither after a cold answer nor for `--background`
    (a one-line error says what to run instead); an owner that already runs still answers, since only
    one process may open the index."""
    out = probe(repo, "index", "--background", PROBE_DAEMON="0")
    assert out.returncode == 1 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "PROBE_DAEMON=0" in out.stderr and "run `probe index`" in out.stderr
    assert owner_ping(repo) is None
    assert probe(repo, "index", "--lexical-only", PROBE_DAEMON="0").returncode == 0
    assert probe(repo, "search", "hash a password", PROBE_DAEMON="0").returncode == 0
    assert owner_ping(repo) is None  # answered cold, started nothing
    daemon = json.loads(probe(repo, "index", "--background", "--json", PROBE_DAEMON="1").stdout)["owner_pid"]
    try:
        st = json.loads(probe(repo, "status", "--json", PROBE_DAEMON="0").stdout)
        assert st["role"] == "attached" and st["owner_pid"] == daemon and st["owner_kind"] == "daemon"
    finally:
        assert probe(repo, "stop").returncode == 0
