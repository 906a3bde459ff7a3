"""Probe's engine: index a repository and answer hybrid searches over it.

The CLI, the terminal app and the MCP server are thin faces over these entry points. Imports are
lazy so that a face starts fast (an MCP ``initialize`` must not wait for onnxruntime).
"""
from __future__ import annotations

import importlib

_EXPORTS = {
    "PRESETS": "config",
    "WorkspaceConfig": "config",
    "init_workspace": "config",
    "ProbeError": "errors",
    "IndexReport": "indexing.indexer",
    "index_workspace": "indexing.indexer",
    "index_status": "indexing.status",
    "IndexProgress": "records",
    "SearchResult": "records",
    "SearchFilters": "retrieval.search",
    "SearchResponse": "retrieval.search",
    "search": "retrieval.search",
    "Workspace": "workspace",
}

__all__ = sorted([*_EXPORTS, "package_version"])


def package_version() -> str:
    """The installed distribution's version (what ``probe --version`` and MCP ``serverInfo`` say)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("probe")
    except PackageNotFoundError:  # a source tree on sys.path without an install
        return "0+unknown"


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'probe_core' has no attribute {name!r}")
