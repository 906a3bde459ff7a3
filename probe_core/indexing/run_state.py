"""What one index run carries between its phases (``indexer.py``): the report it returns, the
progress it shows, and the facts the scan fixed (the manifest's rows before the run, the branch
book, the scan's clock). Its own module so each phase module can take it without importing the
indexer that orchestrates them.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..records import Chunk, IndexProgress, ScannedFile
from ..storage.manifest import FileRow
from ..workspace import Workspace
from .branches import BranchBook
from .encode import Encoded

ProgressCallback = Callable[[IndexProgress], None]


def _noop(_: IndexProgress) -> None:
    return None


@dataclass(slots=True)
class IndexReport:
    files_seen: int = 0
    files_indexed: int = 0
    files_unchanged: int = 0
    files_deleted: int = 0
    files_failed: int = 0
    files_skipped: int = 0  # binary, too large, outside root
    chunks_indexed: int = 0
    chunks_embedded: int = 0
    generation: int = 0
    reconciled: dict = field(default_factory=dict)
    files_revived: int = 0  # versions kept for another branch, checked out again (no re-embedding)
    chunks_reused: int = 0  # chunks whose dense vector an earlier version of the file already had
    files_retagged: int = 0  # unchanged files that gained the checked-out branch in their tag
    branches: dict = field(default_factory=dict)
    seconds: float = 0.0
    errors: list[tuple[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__slots__}


@dataclass(slots=True)
class Changed:
    """A file the run (re)indexes: its scan entry, the hash of its text, its chunks (none for a
    version kept for another branch, which is revived instead), and what a worker process made of
    them for the store (``encode.py``; None: the writer makes it)."""

    file: ScannedFile
    file_hash: str
    chunks: list[Chunk]
    encoded: Encoded | None = None


@dataclass(slots=True)
class IndexRun:
    """The state the phases of one run share."""

    ws: Workspace
    report: IndexReport
    state: IndexProgress
    progress: ProgressCallback
    book: BranchBook
    known: dict[str, FileRow]  # the manifest's file rows before the run
    scan_started: int  # ``change_detection.scan_clock()`` before the scan's first stat
    paths: list[str] | None  # the watcher's files, or None for a full scan
    failed_now: int = 0  # files that failed in this run (their rows changed)
    fresh: bool = False  # the manifest held no chunks when the run began: no file has points to replace
    # path → (text, chunks) read by the BM25 average-length sample of a run whose files are read in
    # this process: the file's own phase takes them instead of reading (a PDF: parsing) it again
    sampled: dict = field(default_factory=dict)
