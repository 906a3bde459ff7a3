"""An owner inside another program (the app, a test) whose root goes away stops owning it and
leaves its host alone: only a process that handles SIGTERM (``probe mcp``) is sent one."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]

_HOST = textwrap.dedent("""
    import signal, sys
    from pathlib import Path
    from probe_core.engine.service import OwnerEngine

    root = Path(sys.argv[1])
    handled = []
    if sys.argv[2] == "handler":  # as probe mcp does
        signal.signal(signal.SIGTERM, lambda *_: handled.append(1))
    engine = OwnerEngine(root, kind="mcp")  # not started: the test plays the worker's root check
    root.rename(root.with_name("moved"))
    assert engine._root_left() and engine.shutdown_requested.is_set()
    print("host alive", "handled" if handled else "not signalled", flush=True)
""")


def _host(tmp_path: Path, mode: str) -> subprocess.CompletedProcess:
    root = tmp_path / mode / "repo"
    root.mkdir(parents=True)
    (root / "a.py").write_text("def f():\n    return 1\n")
    return subprocess.run([sys.executable, "-c", _HOST, str(root), mode], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=120)


def test_an_owner_inside_a_host_without_a_sigterm_handler_leaves_it_running(tmp_path):
    out = _host(tmp_path, "plain")
    assert out.returncode == 0, (out.returncode, out.stderr)  # it used to be killed by SIGTERM (-15)
    assert "host alive not signalled" in out.stdout


def test_a_probe_mcp_like_host_still_gets_sigterm(tmp_path):
    out = _host(tmp_path, "handler")
    assert out.returncode == 0, (out.returncode, out.stderr)
    assert "host alive handled" in out.stdout
