"""`.ci/run`, the README's test command: both suites run whatever the first one does, each is
reported, and the run fails at the end if either failed. Driven for real with bash, in a copy of
its folder layout where uv, the reranker's script and the system tools are stand-ins."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def ci(tmp_path):
    """Run a copy of `.ci/run` with `uv run pytest` exiting ``main`` and the reranker's tests ``rerank``."""
    repo = tmp_path / "repo"
    (repo / ".ci").mkdir(parents=True)
    shutil.copy(REPO / ".ci" / "run", repo / ".ci" / "run")
    stubs = tmp_path / "bin"
    stubs.mkdir()
    for tool in ("git", "podman", "busybox", "runc", "tmux", "rg"):  # present: nothing to install
        (stubs / tool).write_text("#!/bin/sh\nexit 0\n")
        (stubs / tool).chmod(0o755)
    (repo / "scripts").mkdir()
    (repo / "scripts" / "bootstrap.py").write_text(f"print({str(stubs / 'uv')!r})\n")
    (repo / "services" / "reranker").mkdir(parents=True)

    def run(main: int, rerank: int) -> subprocess.CompletedProcess:
        (stubs / "uv").write_text('#!/bin/sh\nif [ "$1" = run ]; then echo "pytest ran with PATH=$PATH"; '
                                  f'exit {main}; fi\nexit 0\n')
        (stubs / "uv").chmod(0o755)
        (repo / "services" / "reranker" / "run-tests.sh").write_text(f"echo 'reranker tests ran'\nexit {rerank}\n")
        return subprocess.run(["bash", str(repo / ".ci" / "run")], capture_output=True, text=True, timeout=60,
                              env={"PATH": f"{stubs}:/usr/bin:/bin", "HOME": str(tmp_path)})

    return run


@pytest.mark.parametrize("main", [1, 5])  # 5: pytest collected no tests
def test_a_failing_main_suite_still_runs_the_reranker_suite_and_fails_the_run(ci, main):
    out = ci(main=main, rerank=0)
    assert "pytest ran" in out.stdout and "reranker tests ran" in out.stdout
    assert f"main suite (uv run pytest -q): exit {main}" in out.stdout
    assert out.returncode != 0 and f"FAILED: main suite (pytest exit {main})" in out.stderr


def test_a_failing_reranker_suite_fails_the_run(ci):
    out = ci(main=0, rerank=1)
    assert out.returncode != 0 and "FAILED: reranker service (exit 1)" in out.stderr


def test_both_suites_passing_pass_the_run(ci):
    out = ci(main=0, rerank=0)
    assert out.returncode == 0, out.stderr
    assert "pytest ran" in out.stdout and "reranker tests ran" in out.stdout and "both suites passed" in out.stdout


def test_the_tests_find_sbin_tools_whatever_the_callers_path(ci):
    """Called with PATH=/usr/bin:/bin, the suites still see /usr/sbin and /sbin (runc, iptables)."""
    out = ci(main=0, rerank=0)
    path = next(line for line in out.stdout.splitlines() if "pytest ran with PATH=" in line).split("=", 1)[1]
    assert {"/usr/sbin", "/sbin"} <= set(path.split(":")), path
