"""Typed values that cross module seams: chunks, scanned files, search requests and results, progress."""
from __future__ import annotations

import dataclasses
import hashlib
import os
import uuid
from dataclasses import dataclass, field
from typing import Literal

ChunkKind = Literal["code", "doc", "config", "test"]
POINT_NAMESPACE = uuid.UUID("6f0b3c7e-8a4e-5d8e-9c59-70726f626531")


def short_hash(text: str) -> str:
    """16 hex chars of sha256: the chunk/file content identity stored in payloads and manifest."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def point_id(workspace_id: str, path: str, start_line: int, end_line: int, file_hash: str = "") -> str:
    """The point of one chunk of one version of a file: deterministic (re-indexing can never
    duplicate), and two branches' versions of a file get different points.

    With a ``file_hash`` (16 hex digits, ``short_hash``) the id is a UUIDv8 (RFC 9562's custom
    layout) that carries the file's version itself, 64 bits, beside 58 bits of a hash of
    ``workspace_id:path:start:end``: a store need not keep the version in every point's payload
    (``file_hash_of``; ``storage/edge_payload.py``). Otherwise (and for points made before) a UUIDv5
    of that key."""
    key = f"{workspace_id}:{path}:{start_line}:{end_line}"
    if len(file_hash) != 16 or not _is_hex(file_hash):
        return str(uuid.uuid5(POINT_NAMESPACE, key + (f":{file_hash}" if file_hash else "")))
    version = int(file_hash, 16)
    where = int.from_bytes(hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()[:8], "big") >> 6
    value = ((version >> 16) << 80 | 0x8 << 76 | ((version >> 4) & 0xFFF) << 64  # custom_a, ver, custom_b
             | 0b10 << 62 | (version & 0xF) << 58 | where)  # variant, custom_c
    return str(uuid.UUID(int=value))


def file_hash_of(pid: str) -> str | None:
    """The file version a ``point_id`` made with one carries (None for a UUIDv5 id). Read for every
    hit a search decodes: the canonical text is parsed as hex (0.9 µs against 1.6 through ``uuid.UUID``)."""
    try:
        value = int(pid.replace("-", ""), 16) if len(pid) == 36 else -1
    except (ValueError, TypeError, AttributeError):
        return None
    if not 0 <= value < 1 << 128:
        return None
    if (value >> 76) & 0xF != 8 or (value >> 62) & 0b11 != 0b10:
        return None
    version = (value >> 80) << 16 | ((value >> 64) & 0xFFF) << 4 | (value >> 58) & 0xF
    return f"{version:016x}"


def _is_hex(text: str) -> bool:
    return all(c in "0123456789abcdef" for c in text)


@dataclass(frozen=True, slots=True)
class Chunk:
    """One retrievable unit of a file. Lines are 1-based and inclusive."""

    path: str  # posix, relative to the workspace root
    start_line: int
    end_line: int
    text: str
    language: str  # "python", "markdown", "text", ...
    chunk_kind: ChunkKind
    symbol: str | None = None  # "parse_args", "Router.Route"
    symbol_kind: str | None = None  # function|method|class|struct|interface|header|section|block|lines
    parent_symbol: str | None = None
    is_fragment: bool = False  # a piece of a unit too large to keep whole

    @property
    def chunk_hash(self) -> str:
        return short_hash(self.text)


@dataclass(frozen=True, slots=True)
class ScannedFile:
    """A file the scanner decided to index, with the stat fields change detection compares.

    ``(mtime, size)`` alone misses an edit that keeps the size and restores the mtime (``touch -r``,
    ``rsync -t``, a checkout of a same-size blob): ``ctime`` cannot be set back by a user, and a
    file replaced by another one has a new ``(dev, inode)``. See ``indexing.change_detection``."""

    path: str  # posix, relative to root
    size: int
    mtime_ns: int
    ctime_ns: int = 0
    inode: int = 0
    dev: int = 0

    @classmethod
    def from_stat(cls, path: str, info: os.stat_result) -> "ScannedFile":
        return cls(path, info.st_size, info.st_mtime_ns, info.st_ctime_ns, _int64(info.st_ino), _int64(info.st_dev))


def _int64(value: int) -> int:
    """A 64-bit unsigned stat field as the signed integer SQLite stores (overlayfs sets inodes'
    high bits); equal values stay equal."""
    return value - (1 << 64) if value >= 1 << 63 else value


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """A file the scanner saw and left out, with the reason (binary, too_large, symlink_outside, ...)."""

    path: str
    reason: str


@dataclass(slots=True)
class IndexProgress:
    """A snapshot of indexing progress; the CLI bar, the TUI dashboard and index_status read it."""

    phase: str = "idle"  # idle|scanning|chunking|sparse|dense|done|error
    files_scanned: int = 0
    files_total: int = 0
    chunks_indexed: int = 0  # lexically searchable (sparse vectors stored)
    chunks_embedded: int = 0  # dense vectors stored
    chunks_total: int = 0
    files_failed: int = 0
    message: str = ""


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """One search as every face asks it and every ``Engine`` answers it (``engine/protocol.py``).

    The fields are the MCP ``search`` tool's arguments and the owner RPC's ``search`` params, by the
    same names and defaults (``params``), so the faces, the engines and the wire agree on one list.
    Values are checked where the search runs (``retrieval.search.check_query``, ``limits``), so
    every face gets the same one-line error."""

    query: str
    top_k: int = 12
    mode: str = "auto"  # fast | quality | auto
    instruction: str | None = None  # a task instruction for the embedder and the reranker
    filters: dict | None = None  # languages, chunk_kinds, include_globs, exclude_globs, branch, collections...
    max_tokens: int | None = None  # the answer's budget; None: no budget

    @classmethod
    def of(cls, request: SearchRequest | str, **options) -> SearchRequest:
        """``request`` itself (with ``options`` replaced), or a request for the query ``request``:
        the keyword form ``engine.search("query", top_k=3)`` that scripts and tests use."""
        if isinstance(request, SearchRequest):
            return dataclasses.replace(request, **options) if options else request
        return cls(request, **options)

    def replace(self, **changes) -> SearchRequest:
        return dataclasses.replace(self, **changes)

    def params(self) -> dict:
        """The owner RPC's ``search`` params (``SearchRequest(**params)`` reads them back)."""
        return {"query": self.query, "top_k": self.top_k, "mode": self.mode, "instruction": self.instruction,
                "filters": self.filters, "max_tokens": self.max_tokens}


@dataclass(slots=True)
class SearchResult:
    """One hit as agents and the CLI see it (DESIGN §5)."""

    path: str
    start_line: int
    end_line: int
    snippet: str
    score: float
    stale: bool
    symbol: str | None
    language: str | None
    chunk_kind: str | None
    signals: dict = field(default_factory=dict)  # dense_rank, bm25_rank, rerank_score?
    branches: list[str] | None = None  # set when the range is another branch's version of the file

    @property
    def source(self) -> str:
        return f"{self.path}#L{self.start_line}-L{self.end_line}"

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "snippet": self.snippet,
            "score": round(self.score, 6),
            "stale": self.stale,
            "source": self.source,
            "symbol": self.symbol,
            "language": self.language,
            "chunk_kind": self.chunk_kind,
            "signals": self.signals,
            **({"branches": self.branches} if self.branches is not None else {}),
        }
