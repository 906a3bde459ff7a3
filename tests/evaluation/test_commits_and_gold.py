"""Commit messages as queries, and what a commit changed located in today's tree (real git, real
tree-sitter extraction, the real symbol graph)."""
from __future__ import annotations

import pytest

from probe_core import index_workspace
from probe_core.evaluation.bm25_baseline import WindowBm25, tokens
from probe_core.evaluation.commits import Commit, iter_commits, query_from_message, read_hunks, skip_reason
from probe_core.evaluation.gold import commit_gold
from probe_core.evaluation.metrics import score
from probe_core.intel.build import ensure_graph, graph_store

from .conftest import V3, git



@pytest.mark.parametrize("message, query", [
    ("Fix retry loop (#123)\n\nSigned-off-by: A <a@x>", "Fix retry loop"),
    ("fix(parser): handle empty lines\n\nThe parser choked on blank input.\n\nCo-authored-by: B <b@x>",
     "handle empty lines The parser choked on blank input"),
    ("Faster rendering, see https://example.com/issue/9 and GH-12\n\n* cache glyphs\n* skip hidden rows",
     "Faster rendering, see and cache glyphs skip hidden rows"),
])
def test_messages_become_queries(message, query):
    assert query_from_message(message) == query


def test_long_messages_are_cut_at_a_word():
    q = query_from_message("word " * 200)
    assert len(q) <= 300 and q.endswith("word")


@pytest.mark.parametrize("subject, reason", [
    ("Revert \"Add cache\"", "revert or merge"),
    ("Bump version to 2.0.1 for release", "version bump or release"),
    ("v2.0.1", "version bump or release"),
    ("wip", "message too short"),
    ("mobx 6.12.3", "message too short"),
    ("Cache parsed headers per request", None),
])
def test_messages_that_are_not_queries(subject, reason):
    commit = Commit(sha="0" * 40, subject=subject, body="")
    assert skip_reason(commit, query_from_message(subject)) == reason


def test_hunks_are_the_new_side_lines(history):
    root, _ = history
    commits = list(iter_commits(root, limit=10))
    assert [c.subject for c in commits][:2] == ["Test that parsing keeps single words",
                                                "Add a path separator helper for callers"]
    fix = next(c for c in commits if c.subject.startswith("Drop empty"))
    read_hunks(root, fix)
    assert list(fix.files) == ["src/text.py"]
    assert {line for h in fix.files["src/text.py"] for line in range(h.start, h.end + 1)} == {2, 3}


def test_gold_is_the_changed_definition_where_it_is_today(history):
    root, ws = history
    kinds = {p: kind for p, (_h, _lang, kind) in ws.manifest.indexed_files().items()}
    commits = {c.subject: c for c in iter_commits(root, limit=10)}
    fix = commits["Drop empty pieces when parsing whitespace separated text"]
    read_hunks(root, fix)
    gold, reason = commit_gold(root, fix, graph_store(ws), kinds)
    # parse() was at lines 1-3 in that commit; commit 3 pushed it down to 8-10
    assert reason is None
    assert [(g.path, g.start_line, g.end_line, g.symbol) for g in gold] == [("src/text.py", 8, 10, "parse")]

    only_tests = commits["Test that parsing keeps single words"]
    read_hunks(root, only_tests)
    assert commit_gold(root, only_tests, graph_store(ws), kinds)[1].startswith("no indexed code changed")


def test_a_definition_gone_since_leaves_no_gold(history):
    root, ws = history
    (root / "src/text.py").write_text(V3.replace("def parse(text):", "def tokenize(text):"))
    git(root, "commit", "-qam", "Rename parse to tokenize everywhere in the text module")
    index_workspace(ws)
    ensure_graph(ws)
    kinds = {p: kind for p, (_h, _lang, kind) in ws.manifest.indexed_files().items()}
    fix = next(c for c in iter_commits(root, limit=10) if c.subject.startswith("Drop empty"))
    read_hunks(root, fix)
    assert commit_gold(root, fix, graph_store(ws), kinds) == (
        [], "the changed definitions are not in today's tree (or only top-level lines changed)")


def test_metrics_follow_the_dev_set_definitions():
    gold = [{"path": "a.py", "start_line": 10, "end_line": 20}, {"path": "b.py", "start_line": 1, "end_line": 5}]
    results = [{"path": "c.py", "start_line": 1, "end_line": 9}, {"path": "a.py", "start_line": 15, "end_line": 16},
               {"path": "a.py", "start_line": 1, "end_line": 400}]  # a range counts as its first 200 lines
    assert score(results, gold) == {"R@1": 0.0, "R@10": 0.5, "MRR@10": 0.5}
    assert score([{"path": "b.py", "start_line": 5, "end_line": 5}], gold)["R@1"] == 1.0


def test_bm25_baseline_ranks_the_window_with_the_rare_words():
    files = [("a.py", "\n".join(f"common line {i}" for i in range(100))),
             ("b.py", "\n".join(["common"] * 70 + ["retryBackoff grows exponentially"] + ["common"] * 10))]
    bm25 = WindowBm25(files)
    top = bm25.search("retry backoff", top_k=3)
    assert top[0]["path"] == "b.py" and top[0]["start_line"] <= 71 <= top[0]["end_line"]
    assert "retrybackoff" in tokens("retryBackoff") and "retry" in tokens("retryBackoff")
    assert bm25.search("nothing matches this", top_k=3) == []


def _user_gitconfig(tmp_path, monkeypatch, text: str) -> None:
    """A user's ~/.gitconfig for the git processes the evaluation runs."""
    config = tmp_path / "user.gitconfig"
    config.write_text(text)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))


def test_a_users_git_settings_do_not_change_what_is_read(history, tmp_path, monkeypatch):
    root, _ = history
    _user_gitconfig(tmp_path, monkeypatch, "[diff]\n\tnoprefix = true\n\tmnemonicPrefix = true\n"
                                           "[log]\n\tshowSignature = true\n[core]\n\tquotePath = true\n")
    commits = list(iter_commits(root, limit=10))
    assert len(commits) == 4 and all(len(c.sha) == 40 for c in commits)
    fix = next(c for c in commits if c.subject.startswith("Drop empty"))
    read_hunks(root, fix)
    assert {p: [(h.start, h.end) for h in hunks] for p, hunks in fix.files.items()} == {"src/text.py": [(2, 3)]}


def test_paths_with_spaces_quotes_and_other_scripts_are_read_as_they_are(history, tmp_path, monkeypatch):
    root, _ = history
    _user_gitconfig(tmp_path, monkeypatch, "[core]\n\tquotePath = true\n")
    names = ["src/my file.py", "src/café.py", 'src/say "hi".py', "src/tab\there.py"]
    for name in names:
        (root / name).write_text("def f():\n    return 1\n")
    # an added line that reads like a file header must stay a line of its file
    (root / "src/text.py").write_text(V3 + "\n++ b/not_a_file.py\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Add four modules with unusual names")
    commit = next(iter_commits(root, limit=1))
    read_hunks(root, commit)
    assert sorted(p for p in commit.files if p.startswith("src/")) == sorted([*names, "src/text.py"])
    assert all([(h.start, h.end) for h in commit.files[name]] == [(1, 2)] for name in names)
    end = len(V3.splitlines())
    assert [(h.start, h.end) for h in commit.files["src/text.py"]] == [(end + 1, end + 2)]


@pytest.mark.parametrize("printed, path", [
    ("b/plain.py", "b/plain.py"),
    ('"b/caf\\303\\251 \\"x\\".py"', 'b/café "x".py'),
    ('"b/tab\\there\\\\.py"', "b/tab\there\\.py"),
])
def test_c_quoted_paths_are_unquoted(printed, path):
    from probe_core.evaluation.commits import unquote_path

    assert unquote_path(printed) == path
