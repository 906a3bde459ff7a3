"""The CLI's engine when no ``probe mcp`` owns the workspace: answers in-process, indexes nothing."""
from __future__ import annotations

import os
from pathlib import Path

from ..records import SearchRequest


class DirectEngine:
    """A one-shot engine for the CLI when no owner runs: answers in this process, indexes nothing.

    The caller holds the owner lock meanwhile, so no other process opens the embedded store.
    """

    role = "direct"

    def __init__(self, root: Path | str, *, probe_dir: Path | None = None):
        from ..workspace import Workspace

        self.root = Path(os.path.realpath(root))
        self.ws = Workspace.open(self.root, create=False, probe_dir=probe_dir)

    def search(self, request: SearchRequest | str, **options) -> dict:
        from .answers import search_answer

        out = search_answer(self.ws, SearchRequest.of(request, **options))
        out["indexing_in_progress"] = False
        return out

    def open_file(self, path: str, start_line: int | None = None, end_line: int | None = None) -> dict:
        from .answers import open_file_answer

        return open_file_answer(self.root, path, start_line, end_line, ws=self.ws)

    def intel(self, tool: str, args: dict) -> dict:
        from .answers import intel_answer

        return intel_answer(self.ws, tool, args)

    def memory(self, action: str, args: dict) -> dict:
        from .answers import memory_answer

        return memory_answer(self.root, action, args)

    def index_paths(self, paths: list[str]) -> dict:
        """Index these files now, in this process (the caller holds the owner lock)."""
        from ..indexing.indexer import index_workspace

        report = index_workspace(self.ws, paths=list(paths))
        return {"files_indexed": report.files_indexed, "chunks_indexed": report.chunks_indexed,
                "generation": report.generation}

    def rescan(self) -> dict:
        from ..indexing.indexer import index_workspace

        report = index_workspace(self.ws)
        return {"files_indexed": report.files_indexed, "chunks_indexed": report.chunks_indexed,
                "files_unchanged": report.files_unchanged, "files_deleted": report.files_deleted,
                "generation": report.generation}

    def index_status(self) -> dict:
        from ..indexing.status import index_status

        out = index_status(self.ws)
        out.update({"role": self.role, "pid": os.getpid(), "owner_pid": None, "indexing_in_progress": False})
        return out

    def close(self) -> None:
        self.ws.close()
