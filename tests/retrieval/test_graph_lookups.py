"""A search's graph work is bounded by what its top hits hold, not by the repository: each called
name's definitions are read once a search (a hub calls a helper many times, and hubs share
helpers), a hub's callees are looked up for its first ``MAX_CALLED`` distinct names, and the calls
of a name called from more files than ``MAX_FANOUT`` are counted, not read (real tree-sitter graph,
real manifest)."""
from __future__ import annotations

import collections

import pytest

from probe_core import Workspace, index_workspace
from probe_core.intel.store import GraphStore
from probe_core.retrieval import graph_evidence
from probe_core.retrieval.graph_evidence import graph_list
from probe_core.storage.protocol import StoreHit

CALLED = 60  # distinct names the generated hub calls, more than MAX_CALLED
TREE = {
    "src/util.py": "def helper(x):\n    return x + 1\n\n\ndef other(y):\n    return y * 2\n\n\ndef third(z):\n    return z - 3\n",
    "src/a.py": "from util import helper, other\n\n\ndef hub_a():\n    helper(1)\n    helper(2)\n    helper(3)\n    return other(1)\n",
    "src/b.py": "from util import helper, other, third\n\n\ndef hub_b():\n    helper(4)\n    other(2)\n    return third(3)\n",
    "src/gen.py": "".join(f"def f{i}():\n    return {i}\n\n\n" for i in range(CALLED))
                  + "def dispatch():\n" + "".join(f"    f{i}()\n" for i in range(CALLED)),
    "src/common.py": "def common():\n    return 0\n\n\ndef rare():\n    return 1\n",
}
USERS = 14  # files calling ``common``: more than MAX_FANOUT; the first two also call ``rare``
for _i in range(USERS):
    TREE[f"src/use_{_i:02d}.py"] = (f"from common import common, rare\n\n\ndef use_{_i}():\n"
                                    + ("    rare()\n" if _i < 2 else "") + "    return common()\n")


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    root = tmp_path_factory.mktemp("graph")
    for rel, text in TREE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    w = Workspace.open(root)
    index_workspace(w, dense=False)
    yield w
    w.close()


def hit(ws, path: str, symbol: str) -> StoreHit:
    r = next(r for r in ws.manifest.chunks_for(path) if r.symbol == symbol)
    return StoreHit(id=r.point_id, score=1.0, payload={"file_path": r.path, "start_line": r.start_line,
                                                       "end_line": r.end_line, "symbol": r.symbol,
                                                       "symbol_kind": r.symbol_kind})


@pytest.fixture
def asked(monkeypatch):
    """Names whose definitions the graph store was asked for, with how often."""
    counts: collections.Counter = collections.Counter()
    real = GraphStore.symbols_named

    def spy(self, name, **kw):
        counts[name] += 1
        return real(self, name, **kw)
    monkeypatch.setattr(GraphStore, "symbols_named", spy)
    return counts


def test_each_called_name_is_looked_up_once_a_search(ws, asked):
    ids = graph_list(ws, [hit(ws, "src/a.py", "hub_a"), hit(ws, "src/b.py", "hub_b")], lambda _p: True)
    util = {r.symbol: r.point_id for r in ws.manifest.chunks_for("src/util.py")}
    assert ids[:3] == [util["helper"], util["other"], util["third"]]  # both hubs' callees, best connected first
    assert asked["helper"] == 1 and asked["other"] == 1 and asked["third"] == 1


def test_a_hub_calling_many_names_looks_up_a_bounded_number(ws, asked):
    ids = graph_list(ws, [hit(ws, "src/gen.py", "dispatch")], lambda _p: True)
    assert sum(asked[f"f{i}"] for i in range(CALLED)) == graph_evidence.MAX_CALLED
    assert all(asked[f"f{i}"] == 1 for i in range(graph_evidence.MAX_CALLED))  # the first, in line order
    assert len(ids) == graph_evidence.LIST_LIMIT


def test_calls_from_more_files_than_the_fan_out_are_counted_not_read(ws, monkeypatch):
    from probe_core.intel.build import graph_store

    graph = graph_store(ws)
    assert USERS > graph_evidence.MAX_FANOUT
    assert graph.files_using("common", ("call",), limit=graph_evidence.MAX_FANOUT + 1) == graph_evidence.MAX_FANOUT + 1
    assert graph.files_using("rare", ("call",), limit=graph_evidence.MAX_FANOUT + 1) == 2
    assert graph.files_using("rare", ("import",), limit=99) == USERS  # by kind: every user imports it
    read: collections.Counter = collections.Counter()
    real = GraphStore.refs_named

    def spy(self, name, *args, **kw):
        read[name] += 1
        return real(self, name, *args, **kw)
    monkeypatch.setattr(GraphStore, "refs_named", spy)
    ids = graph_list(ws, [hit(ws, "src/common.py", "common"), hit(ws, "src/common.py", "rare")], lambda _p: True)
    assert read["common"] == 0  # a utility: its 14 calls are not read to learn there are more than 12
    assert read["rare"] == 1
    users = {r.point_id: r.path for p in ("src/use_00.py", "src/use_01.py", "src/use_02.py")
             for r in ws.manifest.chunks_for(p)}
    assert sorted(users[i] for i in ids if i in users) == ["src/use_00.py", "src/use_01.py"]  # rare's callers only
