"""The code workspace's collection profile (``probe_core.collection``): a repository indexed as code.

Every file the scan lists (ignore files and defaults; binaries and huge files left out) is read as
text and chunked by its language; a file deleted from the tree loses its points; points are tagged
with the checked-out git branch; a search ranks the index (``retrieval.search``) and reads its
snippets from disk; the project registry records the root, and the reference libraries are
searched beside it. A reference library's index has its own profile (``libraries.workspace``).
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..records import Chunk
from ..scan import IgnoreRules, ScanResult, read_text, scan_files

if TYPE_CHECKING:
    from ..workspace import Workspace


def chunk_file(path: str, text: str) -> list[Chunk]:
    """``chunking.chunk_file``, loaded on first use: opening a workspace (``probe status``) does not
    wait for the chunkers."""
    from ..chunking import chunk_file as chunk

    return chunk(path, text)


class CodeProfile:
    """A repository's profile. Holds no workspace (a code workspace's lifetime stays its own)."""

    kind = "code"
    keep_deleted = False
    tracks_branches = True
    records_project = True
    searched_with_libraries = True
    prepares_in_workers = True  # its reader and chunker are the plain ones prepare_pool's workers run
    project_id = None

    def __init__(self) -> None:
        self.payload: dict = {}

    def accepts(self, path: str) -> bool:
        return True

    def ignore_rules(self, root: Path | str) -> IgnoreRules:
        return IgnoreRules(root)

    def scan(self, root: Path | str, *, max_file_bytes: int) -> ScanResult:
        return scan_files(root, max_file_bytes=max_file_bytes)

    def read(self, root: Path | str, path: str, *, max_bytes: int | None = None) -> str:
        return read_text(root, path, max_bytes=max_bytes)

    def chunk(self, path: str, text: str) -> list[Chunk]:
        return chunk_file(path, text)

    def search(self, ws: "Workspace", query: str, *, top_k: int = 12, mode: str = "auto",
               instruction: str | None = None, filters: dict | None = None) -> dict:
        from ..retrieval.search import search

        return search(ws, query, top_k=top_k, mode=mode, instruction=instruction, filters=filters).to_dict()


def code_profile(ws: "Workspace") -> CodeProfile:
    """``collection.FACTORIES["code"]``."""
    return CodeProfile()
