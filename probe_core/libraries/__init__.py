"""Reference libraries: folders of documentation (or documents an agent stores) that Probe indexes
beside the project and searches on request.

Each library is a Probe workspace whose root is its folder and whose data dir lives under the user
data dir (``registry``), so it gets the project machinery unchanged — one owner process that
indexes and watches it, attached processes that forward to the owner — with its own collection profile
(``workspace``: documents only, HTML as text, text kept for snippets, deletions kept in incremental
mode). ``fusion`` merges project and library results by their similarity to the query;
``store_doc`` is the MCP ``store`` tool; ``manage`` is what the CLI and the TUI call.
"""
from __future__ import annotations

import importlib

# Lazy, like ``probe_core`` and ``probe_core.engine``: a face that only lists the libraries (the
# ``probe status`` answered by a running owner) must not load search, the store or the model.
_EXPORTS = {
    "open_document": "documents",
    "evidence_fuse": "fusion", "rrf_fuse": "fusion", "search_sources": "fusion", "select_sources": "fusion",
    "add_library": "manage", "index_library": "manage", "list_libraries": "manage", "remove_library": "manage",
    "with_library_summaries": "manage",
    "LibraryPool": "pool",
    "LibraryError": "registry", "validate_name": "registry",
    "LIBRARY_PREFIX": "search", "library_ref": "search", "parse_library_ref": "search",
    "store": "store_doc",
}


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'probe_core.libraries' has no attribute {name!r}")


__all__ = sorted(_EXPORTS)
