"""Which languages the symbol graph can answer callers, callees and references for, and the one-line
answer for the others.

Probe chunks more languages than its graph reads call sites of (``syntax.py`` holds the call and
member nodes it knows). Asked about a definition in one of the others, the intel tools say so
("no call graph for PHP files") instead of returning an empty list that reads like "nobody calls it".
"""
from __future__ import annotations

from .errors import SymbolNotFound
from .model import Symbol

# each has a real-fixture test under tests/intel/
CALL_GRAPH_LANGUAGES = frozenset({"python", "javascript", "typescript", "tsx", "go", "rust", "java", "c", "cpp",
                                  "ruby", "csharp", "php"})
_NAMES = {"javascript": "JavaScript", "typescript": "TypeScript", "tsx": "TSX", "cpp": "C++", "csharp": "C#",
          "php": "PHP", "html": "HTML", "json": "JSON", "yaml": "YAML", "toml": "TOML", "rst": "reStructuredText",
          "pdf": "PDF"}


def has_call_graph(language: str | None) -> bool:
    return language in CALL_GRAPH_LANGUAGES


def no_call_graph(language: str | None) -> str:
    """The one-line answer for a language the graph cannot answer for."""
    name = _NAMES.get(language or "", (language or "plain text").replace("_", " ").title())
    if language in (None, "text"):
        name = "plain text"
    return f"no call graph for {name} files"


def graph_targets(ctx, symbol: str | None, file: str | None, line: int | None) -> tuple[list[Symbol], str | None]:
    """The targets of a callers/callees/references query (``ctx``: its ``QueryContext``) that the
    graph can answer for, or ``(targets, message)`` when it can answer for none: every definition
    found is in a language without a call graph, or ``file`` is such a file."""
    from .targets import relative_path

    try:
        targets = ctx.targets(symbol, file, line)
    except SymbolNotFound:
        rel = relative_path(ctx.ws, file) if file else None
        if rel in ctx.res.languages and not has_call_graph(ctx.res.languages[rel]):
            return [], no_call_graph(ctx.res.languages[rel])
        raise
    supported = [t for t in targets if has_call_graph(t.language)]
    if supported:
        return supported, None
    return targets, no_call_graph(targets[0].language)
