"""Equal fused scores are broken by what the lists said and where the code is, never by point ids
(which hash the workspace's own id): the same tree in two folders gives the same answer."""
from __future__ import annotations

import shutil

from probe_core import Workspace, index_workspace, search
from probe_core.retrieval.rank_fusion import fuse
from probe_core.retrieval.ranking import DEFAULT_RANKING
from probe_core.storage.protocol import StoreHit


def _hit(pid, path="a.py", start=1, dense=None, bm25=None):
    return StoreHit(id=pid, score=0.0, payload={"file_path": path, "start_line": start, "end_line": start + 4},
                    dense_rank=dense, bm25_rank=bm25)


def test_a_tie_goes_to_the_hit_the_dense_list_ranks_higher():
    # dense 1 + BM25 3 sums exactly like dense 3 + BM25 1; the id would have picked "a"
    out = fuse([_hit("a", "a.py", dense=3, bm25=1), _hit("b", "b.py", dense=1, bm25=3)], {}, DEFAULT_RANKING, dict)
    assert out[0].score == out[1].score
    assert [h.id for h in out] == ["b", "a"]


def test_a_tie_no_rank_breaks_goes_to_the_earlier_place_in_the_tree_whatever_the_ids():
    def payloads(ids):
        return {pid: {"file_path": path, "start_line": 10, "end_line": 20}
                for pid, path in (("aa", "src/z.py"), ("zz", "src/b.py")) if pid in ids}

    lists = {"literal": (["aa", "zz"], 1.0), "identifier": (["zz", "aa"], 1.0)}
    out = fuse([], lists, DEFAULT_RANKING, payloads)
    assert out[0].score == out[1].score
    assert [h.payload["file_path"] for h in out] == ["src/b.py", "src/z.py"]


TREE = {
    "routes/mux.py": '''"""The router: a tree of patterns and the handlers registered on them."""


class Mux:
    def __init__(self):
        self.routes, self.middlewares = {}, []

    def handle(self, pattern, handler):
        """Register ``handler`` for requests whose path matches ``pattern``."""
        self.routes[pattern] = handler

    def use(self, middleware):
        """Add a middleware that wraps every handler of this router."""
        self.middlewares.append(middleware)

    def group(self):
        """A copy sharing the route tree, with its own middleware stack."""
        inline = Mux()
        inline.routes = self.routes
        inline.middlewares = list(self.middlewares)
        return inline
''',
    "routes/context.py": '''"""Per-request routing state, pooled so a request does not allocate its own."""

_POOL = []


class Context:
    def __init__(self):
        self.keys, self.values = [], []

    def reset(self):
        self.keys.clear()
        self.values.clear()


def acquire():
    """A reset context from the pool, or a new one when the pool is empty."""
    ctx = _POOL.pop() if _POOL else Context()
    ctx.reset()
    return ctx


def release(ctx):
    _POOL.append(ctx)
''',
}

QUERIES = ["how do inline groups share the route tree but keep their own middleware",
           "avoid allocating a routing context for every request", "register a handler for a pattern"]


def test_the_same_tree_in_two_folders_gives_the_same_answers(tmp_path):
    first = tmp_path / "one"
    for rel, text in TREE.items():
        (first / rel).parent.mkdir(parents=True, exist_ok=True)
        (first / rel).write_text(text)
    second = tmp_path / "two"
    shutil.copytree(first, second)
    answers = []
    for root in (first, second):
        ws = Workspace.open(root)
        try:
            index_workspace(ws)
            answers.append([[(r.path, r.start_line, r.end_line, r.score) for r in search(ws, q, top_k=10).results]
                            for q in QUERIES])
        finally:
            ws.close()
    assert answers[0] == answers[1]
    assert all(answers[0])
