"""The code keeps its shape: imports run down the layers and close no cycle, functions stay
under 80 lines and modules under 500 (issue 21; the layer picture is in docs/architecture.md).

Counted by a plain ``ast`` pass over the packages, every import included: lazy ones inside
functions and type-only ones under ``TYPE_CHECKING`` as well, since each is a dependency a reader
has to follow.
"""
from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("probe_core", "probe_cli", "probe_tui", "probe_mcp")
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 500

# Top to bottom. A module belongs to the layer of the longest prefix naming it, and may import
# its own layer and the layers below, never one above. docs/architecture.md draws the same table.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("faces", ("probe_cli", "probe_tui", "probe_mcp")),
    ("services", ("probe_core.libraries", "probe_core.registry", "probe_core.doctor",
                  "probe_core.stack", "probe_core.install_mcp", "probe_core.evaluation")),
    ("engine", ("probe_core.engine",)),
    ("domain", ("probe_core.retrieval", "probe_core.indexing", "probe_core.intel",
                "probe_core.memory", "probe_core.rerank")),
    ("workspace", ("probe_core.workspace", "probe_core.per_workspace", "probe_core.collection",
                   "probe_core.project_identity")),
    ("foundations", ("probe_core.scan", "probe_core.chunking", "probe_core.embedding",
                     "probe_core.storage", "probe_core.hardware", "probe_core.sparse",
                     "probe_core.environment", "probe_core.config", "probe_core.gitrefs",
                     "probe_core.records", "probe_core.private_dir", "probe_core.redaction",
                     "probe_core.limits", "probe_core.errors")),
)
# ``probe_core/__init__.py`` names the public functions of the layers above by string and loads
# them on first use (PEP 562 ``__getattr__``): it imports nothing of them, and sits at the bottom.
ROOT = "probe_core"


def _module_files() -> dict[str, Path]:
    mods = {}
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            mods[".".join(parts)] = path
    return mods


def _targets(module: str, path: Path, node: ast.AST, known: dict[str, Path]) -> list[str]:
    """The package modules an import statement loads (the longest known prefix of each name)."""
    names: list[str] = []
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
            package = package[: len(package) - (node.level - 1)]
            base = ".".join(package + ([base] if base else []))
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
    found = []
    for name in names:
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name and name != module:
            found.append(name)
    return found


@lru_cache(maxsize=1)
def _parsed() -> dict[str, tuple[Path, ast.Module, int]]:
    return {m: (p, ast.parse(p.read_text()), len(p.read_text().splitlines())) for m, p in _module_files().items()}


@lru_cache(maxsize=1)
def _imports() -> dict[str, set[str]]:
    known = _module_files()
    graph: dict[str, set[str]] = {m: set() for m in known}
    for module, (path, tree, _) in _parsed().items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                graph[module].update(_targets(module, path, node, known))
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def layer_of(module: str) -> int:
    if module == ROOT:
        return len(LAYERS) - 1
    best, best_len = None, -1
    for rank, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = rank, len(prefix)
    assert best is not None, f"{module} is in no layer: add it to LAYERS and docs/architecture.md"
    return best


def test_no_import_cycles():
    cycles = _cycles(_imports())
    assert not cycles, "\n".join(" <-> ".join(c) for c in cycles)


def test_imports_never_run_up_a_layer():
    upward = sorted(
        f"{src} ({LAYERS[layer_of(src)][0]}) imports {dst} ({LAYERS[layer_of(dst)][0]})"
        for src, dsts in _imports().items() for dst in dsts if layer_of(dst) < layer_of(src)
    )
    assert not upward, "\n".join(upward)


def test_functions_stay_under_80_lines():
    long = sorted(
        f"{module}.{node.name}: {node.end_lineno - node.lineno + 1} lines"
        for module, (_, tree, _) in _parsed().items() for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    )
    assert not long, "\n".join(long)


def test_modules_stay_under_500_lines():
    long = sorted(f"{m}: {n} lines" for m, (_, _, n) in _parsed().items() if n > MAX_MODULE_LINES)
    assert not long, "\n".join(long)


def test_the_checks_see_what_they_count():
    """The pass finds the packages' modules and their imports (an empty graph would pass the rest)."""
    graph = _imports()
    assert len(graph) > 150
    assert "probe_core.engine" in graph["probe_mcp.server"] or any(
        m.startswith("probe_core.engine") for m in graph["probe_mcp.server"])
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert layer_of("probe_core.retrieval.search") > layer_of("probe_core.engine.service")
    assert layer_of("probe_core.libraries.pool") < layer_of("probe_core.engine") < layer_of("probe_core.indexing")
