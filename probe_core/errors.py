"""Every error Probe raises on purpose. Each message is one line a user can act on.

The edges (CLI exit code, MCP ``isError``, TUI notification) turn these into text; anything
that is *not* a ``ProbeError`` is a bug and is reported as such.
"""
from __future__ import annotations


class ProbeError(Exception):
    """Base class: a failure with a message meant for the user."""


class ConfigError(ProbeError):
    """The workspace configuration or an endpoint setting is unusable."""


class WorkspaceNotFound(ProbeError):
    """The root has no index yet (run `probe index`)."""


class PathOutsideRoot(ProbeError):
    """A path resolves (after symlinks) to somewhere outside the workspace root."""


class InvalidRange(ProbeError):
    """A requested line range does not fit the file."""


class BackendUnavailable(ProbeError):
    """The vector store or the embedder cannot be reached or opened."""


class IndexLocked(BackendUnavailable):
    """Another Probe process owns this workspace's embedded store."""


class IndexConfigMismatch(ProbeError):
    """The index was built with another embedding model or dimension than the current one."""


class IndexTooNew(IndexConfigMismatch):
    """The index was written by a newer Probe, in a layout this version cannot read: it is left
    untouched (upgrade Probe, or ``probe index --rebuild``)."""


class DiskFull(ProbeError):
    """The disk holding the index is (nearly) full; indexing stopped cleanly and resumes later."""


class EmbeddingError(ProbeError):
    """The embedder failed on a batch (bad response, timeout after retries)."""


class EmbeddingInterrupted(ProbeError):
    """A document embedding was stopped midway (``interrupt``) because a search needs the cores:
    nothing failed, and the texts it did not finish are embedded later."""


class IndexDamaged(ProbeError):
    """A file under ``.probe/`` (the manifest, the store's segments) is corrupt. Everything there is
    derived from the tree, so the fix is always a rebuild (``probe index --rebuild``)."""


class OwnerNotAnswering(BackendUnavailable):
    """The process that holds the workspace's index accepts connections but does not answer (it is
    stopped, SIGSTOP, or stuck). ``pid`` names it."""

    def __init__(self, message: str, pid: int | None = None):
        super().__init__(message)
        self.pid = pid
