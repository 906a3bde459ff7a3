"""Code intelligence from tree-sitter: a symbol graph kept with the index, and queries over it.

`map_code` (a repository's structure within a token budget), `find_callers`, `find_callees`,
`find_references`, `find_implementations` and `impact_analysis` all return the same shape,
`{target, items, truncated, source}`; `source` is "treesitter" (the default), or "lsp" when a
language server was asked for and answered (`lsp`: callers, references, implementations; `message`
says why one that was asked for did not).
The graph lives in `graph_*` tables of the workspace manifest; the indexer updates it per file
(`build.file_changed`/`file_removed`), and `ensure_graph` catches up with anything indexed without it.
Modules: `extract` (tree → rows), `store` (tables), `build` (keeping it current), `resolve` (which
definition a name means), `targets`, `queries`, `impact`, `mapping`, `lsp`.
"""
from __future__ import annotations

import importlib

_EXPORTS = {
    "rebuild_graph": "build",
    "ensure_graph": "build",
    "graph_store": "build",
    "find_callers": "queries",
    "find_callees": "queries",
    "find_references": "queries",
    "find_implementations": "queries",
    "impact_analysis": "impact",
    "map_code": "mapping",
    "IntelResult": "model",
    "Item": "model",
    "IntelError": "errors",
    "SymbolNotFound": "errors",
    "BadQuery": "errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'probe_core.intel' has no attribute {name!r}")
