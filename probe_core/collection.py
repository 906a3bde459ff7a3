"""The collection profile: what kind of collection a workspace indexes, as one object it holds.

A workspace indexes either a code project (a repository root, ``indexing.profile.CodeProfile``) or
a reference library (a folder of documents, ``libraries.workspace.LibraryProfile``). The kinds
differ in what is scanned, how a file is read and chunked, whether a deleted file's points are
kept, whether points are tagged by git branch, how a search answers and reports coverage, and
whether the project registry records the workspace. Each kind is one object with the interface
below; ``Workspace`` always holds one (``ws.profile``), and the indexer, the engine and the status
report call it instead of asking which kind they have.

The profiles live in the packages that know how to do each job, and those import ``Workspace``;
so this module, below them, names each profile's factory instead of importing it (the way
``probe_core/__init__`` names its exports) and loads it on first use. The key is the one the data
dir's ``config.json`` carries: a ``library`` entry makes a library's index, anything else is code.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from .records import Chunk
from .scan import IgnoreRules, ScanResult

DEFAULT_KIND = "code"
# kind -> "module:factory"; the factory takes the Workspace (which imports this module) and returns its profile
FACTORIES: dict[str, str] = {
    "code": "probe_core.indexing.profile:code_profile",
    "library": "probe_core.libraries.workspace:configure_library",
}


@runtime_checkable
class CollectionProfile(Protocol):
    """One kind of collection. ``ws`` parameters are the ``Workspace`` that holds the profile."""

    kind: str  # "code" | "library": for messages and logs; nothing branches on it
    keep_deleted: bool  # a file gone from the folder keeps its points (an incremental library)
    tracks_branches: bool  # points are tagged with the checked-out git branch
    records_project: bool  # the project registry (``probe prune``) lists the workspace
    searched_with_libraries: bool  # reference libraries are searched beside it (its status lists them)
    prepares_in_workers: bool  # files may be read and chunked by the indexer's worker processes
    payload: dict  # merged into every point's payload
    project_id: str | None  # a fixed project id; None: the repository's identity (``project_identity``)

    def accepts(self, path: str) -> bool: ...

    def ignore_rules(self, root: Path | str) -> IgnoreRules: ...

    def scan(self, root: Path | str, *, max_file_bytes: int) -> ScanResult: ...

    def read(self, root: Path | str, path: str, *, max_bytes: int | None = None) -> str:
        """What the indexer hashes (the manifest's ``file_hash``) and hands to ``chunk``."""
        ...

    def chunk(self, path: str, text: str) -> list[Chunk]: ...

    def search(self, ws: Any, query: str, *, top_k: int = 12, mode: str = "auto",
               instruction: str | None = None, filters: dict | None = None) -> dict:
        """A search answer as a JSON-ready dict (``SearchResponse.to_dict``'s shape), before the
        engine fits it to a token budget."""
        ...


def profile_kind(extra: dict) -> str:
    """The kind named by a workspace config's ``extra`` entries (``config.json``)."""
    return next((kind for kind in FACTORIES if kind != DEFAULT_KIND and kind in extra), DEFAULT_KIND)


def make_profile(ws: Any) -> CollectionProfile:
    """The profile of the workspace ``ws`` (its ``config.extra`` picks the kind)."""
    module, _, name = FACTORIES[profile_kind(ws.config.extra)].partition(":")
    factory: Callable[[Any], CollectionProfile] = getattr(importlib.import_module(module), name)
    return factory(ws)
