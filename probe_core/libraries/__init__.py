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

from .documents import open_document
from .fusion import evidence_fuse, rrf_fuse, search_sources, select_sources
from .manage import add_library, index_library, list_libraries, remove_library
from .pool import LibraryPool
from .registry import LibraryError, validate_name
from .search import LIBRARY_PREFIX, library_ref, parse_library_ref
from .store_doc import store

__all__ = [
    "LIBRARY_PREFIX", "LibraryError", "LibraryPool", "add_library", "evidence_fuse", "index_library", "library_ref",
    "list_libraries", "open_document", "parse_library_ref", "remove_library", "rrf_fuse", "search_sources",
    "select_sources", "store", "validate_name",
]
