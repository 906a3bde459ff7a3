"""A whole ``probe eval`` run: in-process, and through the real CLI."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from probe_core import search
from probe_core.evaluation import EvaluationError, evaluate_history

from .conftest import git, write_tree

PROBE = [sys.executable, "-m", "probe_cli"]


def _in_process(ws):
    return lambda query, _ranking: [r.to_dict() for r in search(ws, query, top_k=10).results]


def test_a_run_scores_probe_and_bm25_on_the_usable_commits(history):
    _, ws = history
    seen = []
    report = evaluate_history(ws, _in_process(ws), progress=seen.append)
    # 4 commits: the first adds whole definitions (usable), the parse fix (usable), the helper
    # (usable: helper() is today's too), the test-only commit (skipped)
    assert report.examined == 4 and len(report.cases) == 3 and report.stopped_by == "history"
    assert dict(report.skipped) == {"no indexed code changed (docs, tests or config only, or files gone since)": 1}
    fix = next(c for c in report.cases if c.subject.startswith("Drop empty"))
    assert fix.query == "Drop empty pieces when parsing whitespace separated text"
    assert set(fix.scores) == {"probe", "bm25"} and fix.scores["probe"]["R@10"] == 1.0
    assert set(report.summary()) == {"probe", "bm25"}
    assert [p.examined for p in seen] == [1, 2, 3, 4] and seen[-1].evaluated == 3
    out = report.to_dict()
    assert out["commits_evaluated"] == 3 and out["cases"][0]["gold"][0]["path"] == "src/text.py"


def test_caps_stop_the_run(history):
    _, ws = history
    assert evaluate_history(ws, _in_process(ws), max_commits=1).stopped_by == "max_commits"
    with pytest.raises(EvaluationError, match="max-commits"):
        evaluate_history(ws, _in_process(ws), max_commits=0)
    with pytest.raises(EvaluationError, match="none of the 0 commits"):
        evaluate_history(ws, _in_process(ws), max_seconds=1e-9)
    with pytest.raises(EvaluationError, match="max-seconds"):
        evaluate_history(ws, _in_process(ws), max_seconds=float("nan"))


def test_the_read_limit_is_told_apart_from_the_end_of_the_history(history, monkeypatch):
    import probe_core.evaluation.runner as runner

    _, ws = history
    monkeypatch.setattr(runner, "COMMITS_READ_PER_CASE", 1)
    monkeypatch.setattr(runner, "MIN_COMMITS_READ", 3)  # 3 of the 4 commits: 2 usable, then the limit
    report = evaluate_history(ws, _in_process(ws), max_commits=3)
    assert (report.examined, len(report.cases), report.stopped_by) == (3, 2, "read_limit")
    assert report.to_dict()["read_limit"] == 3
    monkeypatch.setattr(runner, "MIN_COMMITS_READ", 4)  # the history ends exactly at the limit
    assert evaluate_history(ws, _in_process(ws), max_commits=4).stopped_by == "history"


def test_a_commit_git_cannot_show_is_one_skip(history):
    root, ws = history
    # the blob of parse()'s fixed version: the diffs of commits 2 and 3 need it, the log does not
    blob = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD~2:src/text.py"], capture_output=True,
                          text=True, check=True).stdout.strip()
    (root / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    report = evaluate_history(ws, _in_process(ws))
    assert report.examined == 4 and report.skipped["git could not show the commit"] == 2
    assert [c.subject for c in report.cases] == ["Add a text parser and renderer"]


def _probe(*args, cwd=None):
    return subprocess.run([*PROBE, *args], capture_output=True, text=True, timeout=300, cwd=cwd,
                          env={**os.environ, "PROBE_LOG": "ERROR"})


def test_cli_prints_json_and_a_table(history):
    root, ws = history
    ws.close()  # the CLI process opens the index itself
    out = _probe("eval", "--root", str(root), "--json", "--max-commits", "2")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["commits_evaluated"] == 2 and data["stopped_by"] == "max_commits"
    assert set(data["systems"]) == {"probe", "bm25"} and set(data["systems"]["probe"]) == {"R@1", "R@10", "MRR@10"}
    text = _probe("eval", "--root", str(root))
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines()[0].startswith("3 commits evaluated (4 read; stopped by history)")
    assert "skipped: 1 no indexed code changed" in text.stdout


@pytest.mark.parametrize("flag, value", [("--max-seconds", "nan"), ("--max-seconds", "-5"), ("--max-seconds", "inf"),
                                         ("--max-commits", "0"), ("--max-commits", "x")])
def test_cli_refuses_bad_caps_as_a_usage_error(tmp_path, flag, value):
    out = _probe("eval", "--root", str(tmp_path), flag, value)
    assert out.returncode == 2 and flag in out.stderr and "usage:" in out.stderr


def test_cli_errors_are_one_line(tmp_path):
    plain = write_tree(tmp_path / "plain", {"a.py": "def f():\n    return 1\n"})
    out = _probe("eval", "--root", str(plain))
    assert out.returncode == 1 and out.stderr.count("\n") == 1 and "no Probe index yet" in out.stderr
    _probe("index", "--root", str(plain), "--quiet")
    out = _probe("eval", "--root", str(plain))
    assert out.returncode == 1 and out.stderr.count("\n") == 1 and "has no git history" in out.stderr
    git(plain, "init", "-q", "-b", "main")
    out = _probe("eval", "--root", str(plain))  # a repository without commits
    assert out.returncode == 1 and out.stderr.count("\n") == 1 and "has no git history" in out.stderr
