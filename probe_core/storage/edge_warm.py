"""Read a Qdrant Edge shard's files into the page cache once it is loaded, off the search path.

Qdrant Edge memory-maps its storage and drops those files from the operating system's page cache
when a shard is closed (measured: `fincore` shows the payload pages resident while the shard is
open, none after `close`). So a process that loads a shard reads every page a search touches from
the disk: a BM25 search returns 100 candidates with their payloads, and each payload of a large
shard is one page fault that waits for the disk (the monorepo's 137k points: 100 major faults,
~5 ms a search, against ~1.3 ms with the pages cached; a small shard's payloads share a few pages
and are cached after the first searches). The cost followed the repository's size, not the query.

A thread started at load reads the files a search touches at random, in order of use: the
payloads, the sparse index and the payload indexes, then the dense vectors (which a dense search
reads whole), up to ``WARM_MAX_BYTES``. Plain reads, in blocks: the kernel keeps the pages and the
engine's later page faults find them; the process's resident size does not grow. It stops when the
shard it was started for is closed (``EdgeStore`` passes ``still_open``).
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger("probe.store")

# The files under a segment, in the order searches need them (a segment's folder names: Qdrant's).
WARM_ORDER = ("payload_storage", "vector_index-", "payload_index", "vector_storage-")
WARM_MAX_BYTES = 1 << 30  # a bound on the reads (the monorepo's shard: ~450 MB apparent, mostly dense slots)
BLOCK = 1 << 20


def warm_files(shard_dir: Path) -> list[Path]:
    """The files to read, in order: each kind of ``WARM_ORDER`` across all segments, then by path."""
    def rank(path: Path) -> int:
        part = path.relative_to(shard_dir).parts[2] if len(path.relative_to(shard_dir).parts) > 2 else ""
        return next((i for i, prefix in enumerate(WARM_ORDER) if part.startswith(prefix)), len(WARM_ORDER))

    files = [p for p in (shard_dir / "segments").glob("*/**/*") if p.is_file()]
    return sorted((p for p in files if rank(p) < len(WARM_ORDER)), key=lambda p: (rank(p), str(p)))


def warm(shard_dir: Path, still_open: Callable[[], bool], max_bytes: int = WARM_MAX_BYTES) -> int:
    """Read the shard's files (``warm_files``) into the page cache; the bytes read."""
    done = 0
    buf = memoryview(bytearray(BLOCK))
    for path in warm_files(shard_dir):
        try:
            with open(path, "rb", buffering=0) as fh:
                while done < max_bytes and still_open() and (n := fh.readinto(buf[:min(BLOCK, max_bytes - done)])):
                    done += n
        except OSError:  # replaced by an optimization meanwhile, or unreadable: the engine reports that
            continue
        if done >= max_bytes or not still_open():
            break
    return done


def warm_in_background(shard_dir: Path, still_open: Callable[[], bool]) -> threading.Thread:
    def run() -> None:
        try:
            warm(shard_dir, still_open)
        except Exception:  # noqa: BLE001 - a warm-up is an optimization: never an error of its own
            log.debug("warming %s failed", shard_dir, exc_info=True)

    thread = threading.Thread(target=run, name="probe-store-warm", daemon=True)
    thread.start()
    return thread
