"""Graph queries cost what the symbol's own uses cost, not (definitions × uses) of a common name
(issue 18, item 3: `probe impls Model` on Django read its 2,139 subclass lines once per each of
the 210 classes named `Model`, minutes)."""
from __future__ import annotations

from probe_core import Workspace, index_workspace
from probe_core.intel import find_implementations
from probe_core.intel.resolve import Resolver

NAMESAKES = 30  # test modules that define their own `class Model`
SUBCLASSES = 40  # modules that subclass the real one


def _spy(monkeypatch, cls, method: str, seen: list, what=lambda arg: arg) -> list:
    """Wrap ``cls.method`` so that each call appends ``what(first argument)`` to ``seen`` (the
    lookups a query makes are what these tests count, not its time)."""
    real = getattr(cls, method)

    def spied(self, arg, *a, **k):
        seen.append(what(arg))
        return real(self, arg, *a, **k)

    monkeypatch.setattr(cls, method, spied)
    return seen


def _tree(root):
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "base.py").write_text("class Model:\n    def save(self):\n        return 1\n")
    (root / "apps").mkdir()
    for i in range(SUBCLASSES):
        (root / "apps" / f"app{i}.py").write_text(
            f"from pkg import base\n\n\nclass Thing{i}(base.Model):\n    pass\n\n\nclass Sub{i}(Thing{i}):\n    pass\n")
    (root / "tests").mkdir()
    for i in range(NAMESAKES):
        (root / "tests" / f"test_m{i}.py").write_text(f"class Model:\n    pass\n\n\nclass Local{i}(Model):\n    pass\n")


def test_implementations_of_a_common_name_resolve_each_subclass_line_once(tmp_path, monkeypatch):
    _tree(tmp_path)
    ws = Workspace.open(tmp_path)
    try:
        index_workspace(ws, dense=False)
        calls = _spy(monkeypatch, Resolver, "resolve", [], lambda ref: ref.path)
        res = find_implementations(ws, "Model", max_results=200, max_tokens=None)
        edges = SUBCLASSES + NAMESAKES  # the lines that name `Model` as a base
        # one resolution per base as written, not one per (definition named Model) × (base line)
        assert len(calls) <= edges, len(calls)
        assert res.target["path"] == "pkg/base.py" and not res.truncated
        got = {(i.path, i.symbol) for i in res.items}
        # the real Model's subclasses (and theirs); each namesake's own subclass, as before
        assert {(f"apps/app{i}.py", f"Thing{i}") for i in range(SUBCLASSES)} <= got
        assert {(f"apps/app{i}.py", f"Sub{i}") for i in range(SUBCLASSES)} <= got
        assert {(f"tests/test_m{i}.py", f"Local{i}") for i in range(NAMESAKES)} <= got
        assert len(got) == 2 * SUBCLASSES + NAMESAKES
        assert all(i.context.startswith("class ") for i in res.items)  # the source line, read for kept items
        cut = find_implementations(ws, "Model", max_results=10, max_tokens=None)
        assert len(cut.items) == 10 and cut.truncated
    finally:
        ws.close()


def test_deep_callers_stop_at_a_level_that_already_fills_the_answer(tmp_path, monkeypatch):
    from probe_core.intel import find_callers
    from probe_core.intel.store import GraphStore

    (tmp_path / "hot.py").write_text("def hot():\n    return 1\n")
    for i in range(30):  # 30 callers of hot(), each called by its own caller
        (tmp_path / f"use{i}.py").write_text(
            f"from hot import hot\n\n\ndef user{i}():\n    return hot()\n\n\ndef outer{i}():\n    return user{i}()\n")
    ws = Workspace.open(tmp_path)
    try:
        index_workspace(ws, dense=False)
        names = _spy(monkeypatch, GraphStore, "refs_named", [])
        res = find_callers(ws, "hot", depth=2, max_results=10, max_tokens=None)
        # 30 sites at depth 1 already outnumber the 10 asked for: the 30 callers' own calls are not read
        assert names.count("hot") == 1 and not any(n.startswith("user") for n in names), names
        assert len(res.items) == 10 and res.truncated and {i.depth for i in res.items} == {1}
        full = find_callers(ws, "hot", depth=2, max_results=100, max_tokens=None)  # room for both levels
        assert len(full.items) == 60 and not full.truncated and {i.depth for i in full.items} == {1, 2}
    finally:
        ws.close()


def test_go_satisfiers_are_looked_up_by_method_name_not_by_testing_every_type(tmp_path, monkeypatch):
    from probe_core.intel.store import GraphStore

    (tmp_path / "go.mod").write_text("module example.com/m\n\ngo 1.21\n")
    (tmp_path / "model.go").write_text(
        "package m\n\ntype Model interface {\n\tTable() string\n\tSave() error\n}\n\n"
        "type Row struct{}\n\nfunc (r Row) Table() string { return \"\" }\n\nfunc (r Row) Save() error { return nil }\n\n"
        "type Half struct{}\n\nfunc (h Half) Table() string { return \"\" }\n\n"
        "type Wrapped struct {\n\tRow\n}\n")
    for i in range(40):  # types with other methods: none can satisfy Model
        (tmp_path / f"plain{i}.go").write_text(
            f"package m\n\ntype Plain{i} struct{{}}\n\nfunc (p Plain{i}) Save() error {{ return nil }}\n")
    ws = Workspace.open(tmp_path)
    try:
        index_workspace(ws, dense=False)
        batches = _spy(monkeypatch, GraphStore, "symbols_with_parent", [])  # each call's names
        res = find_implementations(ws, "Model", max_results=100, max_tokens=None)
        assert {(i.symbol, i.kind) for i in res.items} == {("Row", "satisfies"), ("Wrapped", "satisfies")}
        asked = [n for batch in batches for n in batch]
        # only types that own (or embed an owner of) a `Table` method have their method set read
        assert not [n for n in asked if n.startswith("Plain")], asked
    finally:
        ws.close()


def test_a_files_repeated_qualified_calls_resolve_once(tmp_path, monkeypatch):
    """`callers Errorf` on a monorepo: 8,000 `fmt.Errorf(...)` calls in ~1,500 files. A qualified
    call resolves by its file, name and qualifier only (not by the function it is in), so a file's
    repeats are resolved once; a bare call still resolves per enclosing definition."""
    from probe_core.intel import find_callers

    (tmp_path / "util.py").write_text("def helper():\n    return 1\n")
    body = "".join(f"\n\ndef f{k}():\n    util.helper()\n    return util.helper()\n" for k in range(12))
    for i in range(5):
        (tmp_path / f"m{i}.py").write_text("import util\n" + body)
    ws = Workspace.open(tmp_path)
    try:
        index_workspace(ws, dense=False)
        calls = _spy(monkeypatch, Resolver, "resolve", [], lambda ref: ref.path)
        res = find_callers(ws, "helper", max_results=500, max_tokens=None)
        assert len(res.items) == 5 * 12 * 2  # every call site is still an item
        assert sorted(calls) == sorted(f"m{i}.py" for i in range(5)), calls  # one resolution a file
    finally:
        ws.close()
