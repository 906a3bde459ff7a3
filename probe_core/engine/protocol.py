"""The seam between the faces (MCP server, CLI) and whichever process answers for a workspace."""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..records import SearchRequest


class Engine(Protocol):
    """Answers for one workspace. Every method returns a JSON-ready dict and raises ``ProbeError``
    subclasses with messages an agent or a user can act on."""

    role: str  # owner | attached | direct

    def search(self, request: SearchRequest) -> dict:
        """Hybrid search (``answers.search_answer``), trimmed to ``request.max_tokens``. Every engine
        also takes the keyword form ``search("query", top_k=3)`` (``SearchRequest.of``)."""
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


class OwnerControl(Protocol):
    """What only the owner process answers, besides ``Engine`` (``client.AttachedEngine`` asks it;
    ``surface.py`` serves both protocols' methods over RPC, and no others)."""

    def ping(self) -> dict:
        """The owner's pid, root and kind: that it answers, and who it is."""
        ...

    def shutdown(self) -> dict:
        """``probe stop``: a daemon finishes the batch in hand and exits; other owners refuse."""
        ...
