"""A range runs on into the chunk right after it when the fused candidates hold that chunk too
(ranges.join_following): on synthetic hits, and through search on a real index."""
from __future__ import annotations

import pytest

from probe_core import Workspace, index_workspace, search
from probe_core.retrieval import search as search_mod
from probe_core.retrieval.ranges import MAX_MERGED_SPAN, Range, join_following
from probe_core.storage.protocol import StoreHit

LINES = ["x"] * 10 + [""] + ["y"] * 9 + ["z"] * 31  # 1-10 a def, 11 blank, 12-20, then 21-51 (no blank)


def _hit(pid, start, end, path="a.py"):
    return StoreHit(id=pid, score=0.0, payload={"file_path": path, "start_line": start, "end_line": end})


LIVE = {"r"}  # the ranges' best hits: checked-out versions


def _range(start, end, path="a.py"):
    return Range(path, start, end, 1.0, [_hit("r", start, end, path)])


def test_the_following_chunk_joins_across_blank_lines_only():
    first, other = _range(1, 10), _range(22, 51)
    join_following([first, other], [_hit("next", 12, 20), _hit("before", 1, 9, "b.py")], 10, lambda p: LINES, LIVE)
    assert (first.start, first.end) == (1, 20)  # one blank line between: it follows
    assert [h.id for h in first.hits] == ["r", "next"]
    lone = _range(12, 20)
    join_following([lone], [_hit("not-next", 22, 51)], 10, lambda p: LINES, LIVE)
    assert (lone.start, lone.end) == (12, 20)  # line 21 lies between (a chunk the candidates lack): no join


def test_only_the_head_runs_on_never_backwards_nor_past_a_readable_length():
    head, tail = _range(12, 20), _range(1, 10, "b.py")
    join_following([head, tail], [_hit("prev", 1, 10), _hit("b-next", 12, 20, "b.py")], 1, lambda p: LINES, LIVE)
    assert (head.start, head.end) == (12, 20)  # the chunk before it does not join
    assert (tail.start, tail.end) == (1, 10)  # beyond top_k: left as it is
    long = [""] * (MAX_MERGED_SPAN + 20)
    r = _range(1, 10)
    join_following([r], [_hit("far", 12, MAX_MERGED_SPAN + 5)], 5, lambda p: long, LIVE)
    assert r.end == 10
    r = _range(1, 10)
    join_following([r], [_hit("gone", 12, 20)], 5, lambda p: None, LIVE)  # the file cannot be read
    assert r.end == 10
    r = _range(1, 10)
    join_following([r], [_hit("next", 12, 20)], 5, lambda p: LINES, set())  # not the checked-out version
    assert r.end == 10


POOL = '''"""Routing contexts are pooled: a request borrows one instead of allocating its own."""


def checksum(data):
    total = 0
    for byte in data:
        total = (total * 31 + byte) % 65521
    return total


class PooledRoutingContext:
    """A routing context borrowed from the pool for one request and reset before reuse."""

    def __init__(self):
        self.url_params = {}
        self.route_patterns = []


def reset_for_reuse(ctx):
    ctx.url_params.clear()
    ctx.route_patterns.clear()
    return ctx
'''
RESET_LINES = (19, 22)  # reset_for_reuse: the last chunk of pkg/pool.py

OTHERS = {f"pkg/mod{i}.py": f'''def handler_{i}(request):
    """Serve request {i}: read its routing context and answer."""
    return request.context
''' for i in range(4)}


@pytest.fixture(scope="module")
def pooled(tmp_path_factory):
    root = tmp_path_factory.mktemp("pooled")
    for rel, text in {"pkg/pool.py": POOL, **OTHERS}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    ws = Workspace.open(root)
    index_workspace(ws)
    yield ws
    ws.close()


def test_search_shows_the_definition_right_after_the_best_hit_in_its_range(pooled, monkeypatch):
    monkeypatch.setattr(search_mod, "MERGE_POOL", 1)  # top_k 1: only the first 3 hits are merged, so the reset function is not
    query = "pooled routing context borrowed from the pool for one request"
    res = search(pooled, query, top_k=1).results
    assert POOL.splitlines()[RESET_LINES[0] - 1].startswith("def reset_for_reuse")
    first = res[0]
    assert first.path == "pkg/pool.py" and first.start_line < RESET_LINES[0]
    assert first.end_line == RESET_LINES[1]  # the class, then reset_for_reuse after blank lines
    assert first.snippet.startswith(POOL.splitlines()[first.start_line - 1])


def _git(root, *args):
    import subprocess

    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"})


# feature's pool.py has a helper between the class and reset_for_reuse; the checked-out (main)
# version has blank lines there, so only the working tree says "nothing but blank lines between"
FEATURE_POOL = POOL.replace("\n\n\ndef reset_for_reuse", "\n\n\ndef touch_context(ctx):\n    ctx.touched = True\n"
                            "    return ctx\n\n\ndef reset_for_reuse")
MAIN_POOL = POOL.replace("\n\n\ndef reset_for_reuse", "\n" * 8 + "def reset_for_reuse")


def test_another_branchs_version_never_runs_on_by_the_working_trees_lines(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text(".probe/\n")
    for rel, text in {"pkg/pool.py": MAIN_POOL, **OTHERS}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "main")
    _git(root, "checkout", "-qb", "feature")
    (root / "pkg/pool.py").write_text(FEATURE_POOL)
    _git(root, "commit", "-qam", "feature")
    ws = Workspace.open(root)
    index_workspace(ws)  # feature's versions
    _git(root, "checkout", "-q", "main")
    index_workspace(ws)  # main's, checked out (live)
    assert len(MAIN_POOL.splitlines()) == len(FEATURE_POOL.splitlines())  # the same line numbers
    monkeypatch.setattr(search_mod, "MERGE_POOL", 1)
    query = "pooled routing context borrowed from the pool for one request"
    first = search(ws, query, top_k=1, filters={"branch": "feature"}).results[0]
    lines = FEATURE_POOL.splitlines()
    assert first.path == "pkg/pool.py" and first.branches == ["feature"]
    shown = lines[first.start_line - 1:first.end_line]
    assert "def touch_context(ctx):" not in shown  # a chunk no list found, between the hit and the next
    assert first.start_line <= 11 <= first.end_line  # the class itself is still the answer
    # the checked-out version still runs on into its reset function
    live = search(ws, query, top_k=1).results[0]
    assert live.path == "pkg/pool.py" and live.branches is None
    assert MAIN_POOL.splitlines()[live.end_line - 1].strip() == "return ctx"
    ws.close()
