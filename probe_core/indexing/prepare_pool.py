"""Reading, chunking and graphing changed files in worker processes.

Chunking (tree-sitter) and the symbol graph's extraction are most of a first index's CPU, and
they need nothing but a file's text. A run with many files to read hands them to a pool of
processes (``index_workers()``: one per usable CPU unless ``PROBE_INDEX_WORKERS`` says otherwise)
and takes the results back in scan order, a bounded window ahead of the writer (the results
waiting never grow with the repository). Only the main process writes the store, the manifest
and the graph, in the same order as the serial path, so both give the same index. The workers
also make what the store keeps of each chunk (point ids, BM25 sparse vectors, compressed texts:
``encode.py``), so the writer's share of a run is its writes.

The workers are spawned (not forked: the indexer's process holds threads and open stores), and
import only the chunker, the graph's extractor and the sparse encoder.
"""
from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
import traceback
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass

from .. import environment
from ..chunking import chunk_file
from ..errors import ConfigError, ProbeError
from ..intel.extract import extract_file
from ..intel.rows import FileRows, file_rows
from ..intel.words import words_of
from ..records import Chunk, short_hash
from ..scan import read_text
from .encode import Encoded, encode

log = logging.getLogger("probe.index")

# less source to read: the serial path. A worker costs 1-2 CPU-seconds to start (Python, the
# grammars); chunking and graphing cost about 1 s per MB, so a pool pays off from a few MB.
MIN_POOL_BYTES = 4_000_000
WINDOW_FILES = 64  # per worker: results a worker may run ahead of the writer
WINDOW_BYTES = 8_000_000  # per worker: source bytes in flight


def index_workers(env: dict[str, str] | None = None) -> int:
    """How many processes chunk and graph files: ``PROBE_INDEX_WORKERS`` (1: no pool), else
    the CPUs this process may run on."""
    env = environment.environ() if env is None else env
    raw = env.get("PROBE_INDEX_WORKERS", "").strip()
    if raw:
        try:
            value = int(raw)
        except ValueError:
            value = 0
        if not 1 <= value <= 256:
            raise ConfigError(f"PROBE_INDEX_WORKERS must be an integer from 1 to 256 (got {raw[:40]!r})")
        return value
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def dedupe(chunks: list[Chunk]) -> list[Chunk]:
    """One chunk per (start, end): the point id is derived from the range."""
    seen: set[tuple[int, int]] = set()
    out = []
    for c in chunks:
        if (c.start_line, c.end_line) not in seen:
            seen.add((c.start_line, c.end_line))
            out.append(c)
    return out


@dataclass(slots=True)
class Prepared:
    """What a worker made of one file. ``chunks`` is None when the text hashed to ``same_as``
    (only touched) or could not be chunked (``chunk_error``: is it a ``ProbeError``, its message,
    the traceback); ``graph`` is None when extraction failed (``graph_error``: the traceback)."""

    path: str
    file_hash: str = ""
    read_error: str | None = None
    chunks: list[Chunk] | None = None
    chunk_error: tuple[bool, str, str] | None = None
    graph: FileRows | None = None  # the file's graph rows, made ready to write (``intel/rows.py``)
    words: set[bytes] | None = None
    graph_error: str | None = None
    encoded: Encoded | None = None


@dataclass(frozen=True, slots=True)
class Encoding:
    """What the workers need to make a file's points: the workspace id (point ids) and the BM25
    average length (None when the index has none recorded yet: the writer makes the vectors)."""

    workspace_id: str
    avg_len: float | None


def prepare(root: str, path: str, max_bytes: int, same_as: str | None, encoding: Encoding | None = None) -> Prepared:
    """Read, hash, chunk and graph one file, and (with ``encoding``) make its points' ids, sparse
    vectors and compressed texts (in a worker: nothing here touches the index)."""
    try:
        text = read_text(root, path, max_bytes=max_bytes)
    except (OSError, ProbeError) as exc:  # vanished or unreadable between scan and read
        return Prepared(path, read_error=str(exc))
    out = Prepared(path, short_hash(text))
    if out.file_hash == same_as:
        return out
    try:
        out.chunks = dedupe(chunk_file(path, text))
    except Exception as exc:  # noqa: BLE001 - recorded against the file by the writer
        out.chunk_error = (isinstance(exc, ProbeError), str(exc), traceback.format_exc())
    if out.chunks is not None and encoding is not None:
        try:
            out.encoded = encode(encoding.workspace_id, out.file_hash, out.chunks, encoding.avg_len, text)
        except Exception:  # noqa: BLE001 - the writer makes them itself, as on the serial path
            log.warning("encoding %s's chunks failed in a worker", path, exc_info=True)
    try:
        out.graph, out.words = file_rows(extract_file(path, text)), words_of(text)
    except Exception:  # noqa: BLE001 - the graph's catch-up (ensure_graph) retries the file
        out.graph_error = traceback.format_exc()
    return out


def _worker_start(parent: int) -> None:
    """Worker initializer: the worker's stdout goes to stderr (under ``probe mcp`` stdout is the
    protocol's stream), and the worker exits when the indexer's process is gone (a kill -9 of it
    leaves no worker behind; the pool's own shutdown never runs then)."""
    os.dup2(2, 1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, name="probe-parent-watch", daemon=True).start()


def prepare_all(root: str, jobs: Iterable[tuple[str, int, str | None]], *, max_bytes: int,
                workers: int, encoding: Encoding | None = None) -> Iterator[Prepared]:
    """``prepare`` each ``(path, size, same_as)`` (with ``encoding``) in a pool of ``workers``
    processes, yielded in the jobs' order. At most ``WINDOW_FILES`` files or ``WINDOW_BYTES`` of source per worker are
    in flight; closing the iterator stops the pool."""
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_worker_start, initargs=(os.getpid(),))
    pending: deque[tuple[Future, int]] = deque()
    in_flight = 0
    try:
        for path, size, same_as in jobs:
            while pending and (len(pending) >= WINDOW_FILES * workers or in_flight + size > WINDOW_BYTES * workers):
                future, done_size = pending.popleft()
                in_flight -= done_size
                yield future.result()
            pending.append((pool.submit(prepare, root, path, max_bytes, same_as, encoding), size))
            in_flight += size
        while pending:
            yield pending.popleft()[0].result()
    finally:
        for future, _ in pending:
            future.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
