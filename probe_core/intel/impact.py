"""impact_analysis: what depends on a symbol (callers, type uses, implementations, tests) and a risk."""
from __future__ import annotations

from probe_core.chunking.languages import is_test_path
from probe_core.workspace import Workspace

from .model import IntelResult, Item
from .queries import (
    QueryContext,
    _check,
    caller_items,
    finish,
    implementation_items,
    reference_items,
)
from .resolve import TYPE_KINDS

_RISK = (("high", 10, 25), ("medium", 3, 6))  # (level, files at least, functions at least)


def risk_level(files: int, functions: int) -> str:
    """"high" for a symbol used across many files or functions, "low" for a local one."""
    for level, min_files, min_functions in _RISK:
        if files >= min_files or functions >= min_functions:
            return level
    return "low"


def impact_analysis(ws: Workspace, symbol: str | None = None, file: str | None = None,
                    line: int | None = None, *, depth: int = 1, max_results: int = 100,
                    max_tokens: int | None = 4000) -> IntelResult:
    """Everything that would notice a change to the symbol, grouped, with counts and a risk level.

    Items carry `category`: `caller` (calls, `depth` levels up), `type_reference` (annotations,
    imports, other uses), `implementation` (subclasses, implementors) and `test` (any of those
    inside a test file). The summary counts all of them, even beyond the token budget.
    """
    depth = _check(max_results, depth, max_tokens)
    ctx = QueryContext(ws)
    targets = ctx.targets(symbol, file, line)
    items: dict[tuple[str, int], Item] = {}
    for item in caller_items(ctx, targets, depth):
        item.category = "caller"
        items[(item.path, item.line)] = item
    for item in reference_items(ctx, targets):
        if (item.path, item.line) not in items:
            item.category = "type_reference" if item.kind != "call" else "caller"
            items[(item.path, item.line)] = item
    if any(t.kind in TYPE_KINDS for t in targets):
        for item in implementation_items(ctx, targets):
            item.category = "implementation"
            items[(item.path, item.line)] = item
    for item in items.values():
        if is_test_path(item.path):
            item.category = "test"
    everything = list(items.values())
    files = {i.path for i in everything}
    functions = {(i.path, i.symbol) for i in everything if i.symbol and i.category != "implementation"}
    tests = {(i.path, i.symbol or str(i.line)) for i in everything if i.category == "test"}
    counts = {c: sum(1 for i in everything if i.category == c)
              for c in ("caller", "type_reference", "implementation", "test")}
    summary = {"files_affected": len(files), "functions_affected": len(functions),
               "tests_covering": len(tests), "by_category": counts,
               "risk": risk_level(len(files), len(functions))}
    order = {"caller": 0, "implementation": 1, "type_reference": 2, "test": 3}
    everything.sort(key=lambda i: (order[i.category or "caller"], i.path, i.line))
    result = finish(targets, everything, max_results, max_tokens, extra={"summary": summary}, context=ctx.line_text)
    # finish() ranks by confidence; keep the report grouped by category instead
    result.items.sort(key=lambda i: (order[i.category or "caller"], -i.confidence, i.path, i.line))
    return result
