"""An attached process's engine: every call is forwarded to the owner over its socket."""
from __future__ import annotations

import os
from pathlib import Path

from .. import environment
from ..records import SearchRequest
from .lock import read_owner_info, socket_path_for
from .rpc import rpc_call


LSP_TOOLS = ("find_callers", "find_references", "find_implementations")  # those a language server can answer


class AttachedEngine:
    """Forwards every ``Engine`` call to the workspace's owner process.

    Raises ``rpc.OwnerUnavailable`` when no owner answers; ``EngineHandle`` turns that into a
    retry, a takeover, or a clear error.
    """

    role = "attached"

    def __init__(self, root: Path | str, *, rpc_timeout_s: float = 120.0, probe_dir: Path | None = None):
        self.root = Path(os.path.realpath(root))
        self.probe_dir = Path(probe_dir) if probe_dir is not None else self.root / ".probe"
        self.rpc_timeout_s = rpc_timeout_s

    def _socket(self) -> Path:
        published = read_owner_info(self.probe_dir).get("socket")
        return Path(published) if published else socket_path_for(self.probe_dir)

    def _call(self, method: str, params: dict) -> dict:
        return rpc_call(self._socket(), method, params, timeout=self.rpc_timeout_s)

    def search(self, request: SearchRequest | str, **options) -> dict:
        return self._call("search", SearchRequest.of(request, **options).params())

    def open_file(self, path: str, start_line: int | None = None, end_line: int | None = None) -> dict:
        return self._call("open_file", {"path": path, "start_line": start_line, "end_line": end_line})

    def intel(self, tool: str, args: dict) -> dict:
        if tool in LSP_TOOLS and args.get("lsp") is None and environment.get("PROBE_LSP"):
            # the owner would read its own environment: this caller's PROBE_LSP decides its request
            args = {**args, "lsp": environment.get("PROBE_LSP") == "1"}
        return self._call("intel", {"tool": tool, "args": args})

    def memory(self, action: str, args: dict) -> dict:
        return self._call("memory", {"action": action, "args": args})

    def index_status(self) -> dict:
        out = self._call("index_status", {})
        out["role"] = self.role
        out["pid"] = os.getpid()
        return out

    def index_paths(self, paths: list[str]) -> dict:
        return self._call("index_paths", {"paths": list(paths)})

    def rescan(self, timeout: float | None = None) -> dict:
        """A full scan by the owner, answered when its lexical phase is done (``timeout``: how long
        the owner waits for it; the connection waits a little longer)."""
        if timeout is None:
            return self._call("rescan", {})
        return rpc_call(self._socket(), "rescan", {"timeout": timeout}, timeout=timeout + 10)

    def ping(self) -> dict:
        return self._call("ping", {})

    def shutdown(self) -> dict:
        """Ask a daemon owner to exit (``probe stop``); a ``probe mcp`` owner refuses."""
        return self._call("shutdown", {})

    def close(self) -> None:
        return None
