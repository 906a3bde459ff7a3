"""The `probe` command as a user runs it: real subprocesses, real exit codes."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

PROBE = [sys.executable, "-m", "probe_cli"]


def probe(*args, cwd=None):
    return subprocess.run([*PROBE, *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_init_index_search_status(repo):
    out = probe("init", "--root", str(repo))
    assert out.returncode == 0 and "created workspace" in out.stdout
    again = probe("init", "--root", str(repo))
    assert "kept workspace" in again.stdout
    out = probe("index", "--root", str(repo))
    assert out.returncode == 0, out.stderr
    assert "indexed 6 files" in out.stdout  # the fixture: Probe writes no .gitignore into the tree
    assert not (repo / ".gitignore").exists()
    out = probe("search", "hash a password with a salt", "--root", str(repo), "--top-k", "3", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["status"] == "healthy"
    assert data["results"][0]["path"] == "src/auth/passwords.py"
    assert set(data["results"][0]) >= {"path", "start_line", "end_line", "snippet", "score", "stale", "source",
                                        "symbol", "signals"}
    human = probe("search", "hash a password with a salt", "--root", str(repo), "--top-k", "3")
    assert "src/auth/passwords.py#L" in human.stdout
    st = json.loads(probe("status", "--root", str(repo), "--json").stdout)
    assert st["files_indexed"] == 6 and st["index_generation"] == 1 and st["dense_coverage"] == 1.0


def test_search_cwd_default(repo):
    assert probe("index", "-q", cwd=repo).returncode == 0
    out = probe("search", "ServeHTTP", "--json", cwd=repo)
    assert json.loads(out.stdout)["results"][0]["path"] == "router/mux.go"


def test_errors_are_one_line_no_traceback(tmp_path):
    out = probe("search", "x", "--root", str(tmp_path))
    assert out.returncode == 1
    assert out.stderr.startswith("probe: error:") and "probe index" in out.stderr
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1
    out = probe("index", "--root", str(tmp_path / "missing"))
    assert out.returncode == 1 and "not a directory" in out.stderr and "Traceback" not in out.stderr
    out = probe("status", "--root", str(tmp_path))
    assert out.returncode == 1 and "Traceback" not in out.stderr


def test_bad_config_file_is_a_clear_error(repo):
    (repo / ".probe").mkdir()
    (repo / ".probe" / "config.json").write_text("{not json")
    out = probe("index", "--root", str(repo))
    assert out.returncode == 1 and "not valid Probe config" in out.stderr


@pytest.mark.parametrize("content,needle", [
    ("[]", "it holds [], not an object of settings"),
    ('{"preset": "huge"}', "'preset' must be one of embedded, lite, balanced, pro, not \"huge\""),
    ('{"workspace_id": 5}', "'workspace_id' must be a non-empty string"),
    ('{"max_file_bytes": "1MB"}', "'max_file_bytes' must be a positive integer"),
    ('{"lsp": "yes"}', "'lsp' must be true or false"),
])
def test_a_config_file_of_the_wrong_shape_names_the_key(repo, content, needle):
    (repo / ".probe").mkdir()
    (repo / ".probe" / "config.json").write_text(content)
    for verb in ("status", "index", "search"):
        out = probe(verb, *(["x"] if verb == "search" else []), "--root", str(repo))
        assert out.returncode == 1 and "internal error" not in out.stderr, out.stderr
        assert out.stderr.startswith("probe: error: ") and needle in out.stderr and out.stderr.count("\n") == 1


@pytest.mark.parametrize("value", ["-5", "0", "1MB"])
def test_a_bad_max_file_bytes_in_the_environment_loses_nothing(repo, value):
    """PROBE_MAX_FILE_BYTES=0 or less would skip every file, and the run would drop them all."""
    assert probe("index", "--lexical-only", "--root", str(repo)).returncode == 0
    before = json.loads(probe("status", "--json", "--root", str(repo)).stdout)["files_indexed"]
    out = subprocess.run([*PROBE, "index", "--lexical-only", "--root", str(repo)], capture_output=True, text=True,
                         timeout=300, env={**os.environ, "PROBE_MAX_FILE_BYTES": value})
    assert out.returncode == 1 and "PROBE_MAX_FILE_BYTES must be a positive integer" in out.stderr
    status = json.loads(probe("status", "--json", "--root", str(repo)).stdout)
    assert before > 0 and status["files_indexed"] == before


def test_no_args_without_tty_prints_help():
    out = subprocess.run([*PROBE], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert out.returncode == 2 and "usage: probe" in out.stdout


def test_index_when_the_owner_left_before_attach(repo, capsys):
    """The lock was held when `probe index` tried it, but its holder exits before answering the
    rescan: `probe index` indexes in-process, with its own report, `--lexical-only` and the
    registry record, instead of reporting a rescan by "pid None"."""
    import threading
    import time

    from probe_cli.main import main
    from probe_core import Workspace, init_workspace
    from probe_core.engine.lock import EngineLock
    from probe_core.memory.workspaces import Registry

    init_workspace(repo)
    lock = EngineLock(repo / ".probe")
    assert lock.try_acquire()  # an "owner" that serves no RPC and goes away
    threading.Timer(0.5, lock.release).start()
    t0 = time.monotonic()
    assert main(["index", "--root", str(repo), "--lexical-only", "--json"]) == 0
    assert time.monotonic() - t0 >= 0.4
    out = capsys.readouterr().out
    assert "pid None" not in out
    report = json.loads(out)
    assert report["files_indexed"] == 6 and "owner_pid" not in report
    ws = Workspace.open(repo)
    try:
        counts = ws.manifest.counts()
        assert counts["chunks"] > 0 and counts["chunks_dense"] == 0  # --lexical-only honoured
        assert ws.workspace_id in {r.workspace_id for r in Registry().list()}
    finally:
        ws.close()
    assert not (repo / ".probe" / "engine.json").exists()  # the indexer's notice is gone with it


def test_version_is_the_installed_package_version():
    """`probe --version` prints the distribution's version on stdout (looked up only when asked)."""
    from importlib.metadata import version

    out = probe("--version")
    assert out.returncode == 0 and out.stdout == f"probe {version('probe')}\n" and out.stderr == ""
