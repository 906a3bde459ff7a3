"""The collection profile (``probe_core.collection``, issue 21): a code workspace and a reference
library's index each hold a profile with one interface, and the engine and the indexer call it
instead of asking whether a workspace is a library."""
from __future__ import annotations

import ast
import inspect
from pathlib import Path

import probe_core
from probe_core.collection import CollectionProfile
from probe_core.engine.answers import search_answer
from probe_core.indexing.indexer import index_workspace
from probe_core.libraries import add_library, registry
from probe_core.workspace import Workspace

PACKAGE = Path(probe_core.__file__).parent


def _interface(cls) -> dict[str, list[tuple[str, object]]]:
    """The profile protocol's methods as (parameter name, kind) lists, ``self`` left out."""
    return {name: [(p.name, p.kind) for p in list(inspect.signature(getattr(cls, name)).parameters.values())[1:]]
            for name in ("accepts", "ignore_rules", "scan", "read", "chunk", "search")}


def test_a_project_and_a_library_hold_profiles_of_one_interface(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text("def lru_evict(cache):\n    return cache.popitem()\n", "utf-8")
    (project / "notes.md").write_text("# Notes\n\nThe cache evicts the least recently used entry.\n", "utf-8")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("# Guide\n\nThe cache evicts the least recently used entry.\n", "utf-8")
    (docs / "tool.py").write_text("def not_a_document():\n    pass\n", "utf-8")
    add_library(docs, "kb")
    code = Workspace.open(project)
    library = Workspace.open(docs, probe_dir=registry.index_dir("kb"))
    try:
        want = _interface(CollectionProfile)
        for ws in (code, library):
            assert isinstance(ws.profile, CollectionProfile)
            assert _interface(type(ws.profile)) == want, type(ws.profile)
        assert (code.profile.kind, library.profile.kind) == ("code", "library")
        assert code.profile.tracks_branches and not library.profile.tracks_branches
        assert code.profile.records_project and not library.profile.records_project
        assert library.extra_payload == {"collection": "libraries", "library_name": "kb"}
        assert library.project_id == "library:kb"
        for ws, kept in ((code, ["app.py", "notes.md"]), (library, ["guide.md"])):
            index_workspace(ws, dense=False)
            assert sorted(ws.manifest.file_paths()) == kept
            answer = search_answer(ws, "cache evicts least recently used", top_k=3)
            assert answer["results"] and {"status", "index_generation", "dense_coverage", "mode"} <= set(answer)
        assert answer["results"][0]["path"] == "library:kb/guide.md"  # a library answers from its texts
    finally:
        code.close()
        library.close()


def _mentions_library(path: Path) -> list[str]:
    """Where a module reads an attribute named ``library`` (``ws.library``, ``getattr(ws, "library")``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr == "library":
            found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr")
              and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and node.args[1].value == "library"):
            found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    return found


def test_the_engine_and_the_indexer_never_ask_whether_a_workspace_is_a_library():
    modules = sorted([*(PACKAGE / "engine").rglob("*.py"), *(PACKAGE / "indexing").rglob("*.py")])
    assert modules
    assert [hit for path in modules for hit in _mentions_library(path)] == []
