"""The seam between the faces (MCP server, CLI) and whichever process answers for a workspace."""
from __future__ import annotations

from typing import Protocol


class Engine(Protocol):
    """Answers for one workspace. Every method returns a JSON-ready dict and raises ``ProbeError``
    subclasses with messages an agent or a user can act on."""

    role: str  # owner | attached | direct

    def search(self, query: str, *, top_k: int = 12, mode: str = "auto", instruction: str | None = None,
               filters: dict | None = None, max_tokens: int | None = None) -> dict:
        """Hybrid search (``answers.search_answer``), trimmed to ``max_tokens``."""
        ...

    def open_file(self, path: str, start_line: int | None = None, end_line: int | None = None) -> dict:
        """Exact lines from disk (``answers.open_file_answer``)."""
        ...

    def index_status(self) -> dict:
        """Counts, progress, watcher and backend health, and which process answers."""
        ...

    def intel(self, tool: str, args: dict) -> dict:
        """map_code / find_* / impact_analysis (``answers.intel_answer``)."""
        ...

    def memory(self, action: str, args: dict) -> dict:
        """Memory rules: add / update / remove / list (``answers.memory_answer``)."""
        ...

    def index_paths(self, paths: list[str]) -> dict:
        """Index these files now; return once they are searchable (lexically). Used by ``store``."""
        ...

    def rescan(self) -> dict:
        """A full incremental scan now; returns its counts when done (``probe index``)."""
        ...

    def close(self) -> None:
        ...
