"""The lexical phase of an index run: every changed file's chunks stored with their BM25 sparse
vectors (searchable at once), their manifest rows, and their place in the dense queue.

Per file the order is delete the old version's points (or keep them for another branch) → upsert
the new points → commit the manifest row, so a stop anywhere is repaired by the next run's
reconcile (``indexer.reconcile``). A version another branch kept is revived, not re-chunked.
A new index (no chunks in the manifest when the run began: nothing to delete, keep or revive)
writes a whole batch at once: its points in a few upserts, then its rows in one transaction.
Point ids, sparse vectors and compressed texts come made by the worker processes when they read
the files (``encode.py``); the writer makes them itself otherwise.
"""
from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from itertools import islice

import numpy as np

from .. import sparse
from ..chunking import chunk_kind_for, language_for_path
from ..records import Chunk
from ..storage.disk_space import ensure_free_space
from ..storage.manifest import ChunkRow, Manifest, NewFile
from ..storage.protocol import StorePoint
from ..workspace import Workspace
from .change_detection import file_row
from .encode import CONTEXT_HEADER, Encoded, encode, index_text, sparse_vectors
from .fill_order import fill_order
from .run_state import Changed, IndexRun

__all__ = ["CONTEXT_HEADER", "bm25_avg_len", "index_text", "reusable_vectors", "write_lexical"]

BATCH_BYTES = 4_000_000  # source bytes per lexical batch: what the run holds as chunks at most
BATCH_FILES = 1000
UPSERT_POINTS = 256  # points per store upsert of a new index's batch (4096: ~70 MB more RSS on 1M lines, same CPU)


def _payload(ws: Workspace, c: Chunk, chunk_hash: str, file_hash: str, branch: list[str], now: float) -> dict:
    return {
        "workspace_id": ws.workspace_id,
        "repo_id": ws.workspace_id,
        "project_id": ws.project_id,
        "branch": branch,
        "file_path": c.path,
        "file_hash": file_hash,
        "chunk_hash": chunk_hash,
        "start_line": c.start_line,
        "end_line": c.end_line,
        "language": c.language,
        "chunk_kind": c.chunk_kind,
        "symbol": c.symbol,
        "symbol_kind": c.symbol_kind,
        "parent_symbol": c.parent_symbol,
        "is_fragment": c.is_fragment,
        "indexed_at": now,
        **ws.extra_payload,  # a reference library's collection and name (probe_core.libraries)
    }


def reusable_vectors(ws: Workspace, path: str, chunks: list[Chunk]) -> dict[int, np.ndarray]:
    """Dense vectors that other versions of ``path`` already have for identical chunks, by chunk
    index. Same path, text, symbol and parent means the same index text, so the same vector: an
    edit re-embeds only the chunks it changed, and lines moving up or down cost nothing."""
    donors: dict[tuple, str] = {}
    for pid, chunk_hash, symbol, parent in ws.manifest.dense_donors(path):
        donors.setdefault((chunk_hash, symbol, parent), pid)
    if not donors:
        return {}
    want = {k: donors[key] for k, c in enumerate(chunks)
            if (key := (c.chunk_hash, c.symbol, c.parent_symbol)) in donors}
    if not want:
        return {}
    vectors = ws.store.dense_vectors(sorted(set(want.values())))
    return {k: vectors[pid] for k, pid in want.items() if pid in vectors}


def bm25_avg_len(man: Manifest, work: list[Changed]) -> float:
    """The BM25 average document length: the one the index recorded, or (first run) an estimate
    from ``work``'s chunks (the whole tree, or a sample of it: ``indexer._first_avg_len``),
    recorded for every later run."""
    avg = man.get_meta("bm25_avg_len")
    if avg is not None:
        return float(avg)
    avg_len = sparse.estimate_avg_len([index_text(c) for w in work for c in w.chunks])
    man.set_meta("bm25_avg_len", f"{avg_len:.2f}")
    return avg_len


def batches(work: Iterable[Changed], *, max_bytes: int, max_files: int) -> Iterator[list[Changed]]:
    """``work`` in batches of at most ``max_files`` files or about ``max_bytes`` of source."""
    batch: list[Changed] = []
    size = 0
    for w in work:
        batch.append(w)
        size += w.file.size
        if len(batch) >= max_files or size >= max_bytes:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def write_lexical(run: IndexRun, work: Iterable[Changed]) -> None:
    """Phase 3: store every changed file's sparse points and manifest rows, in ``work``'s order,
    one batch at a time: the run never holds more than a batch of chunks (the first batch
    measures the BM25 average length of a new index)."""
    man, state = run.ws.manifest, run.state
    avg_len = None
    try:
        for batch in batches(work, max_bytes=BATCH_BYTES, max_files=BATCH_FILES):
            if avg_len is None:
                avg_len = bm25_avg_len(man, batch)
                state.chunks_total = man.counts()["chunks"]
            state.chunks_total += sum(len(w.chunks) for w in batch)  # known a batch ahead of the writes
            if run.fresh:
                write_new_files(run, batch, avg_len)
            else:
                for w in batch:
                    write_file(run, w, avg_len)
            # persisted per batch: Qdrant Edge's mutable shard then stays smaller, and the run's
            # last flush has no whole-tree backlog to write (both measured: docs/benchmarks.md)
            run.ws.store.flush()
    finally:
        if hasattr(work, "close"):
            work.close()  # a failed write stops the reading (and its worker processes) at once
    if avg_len is None:
        bm25_avg_len(man, [])
    counts = man.counts()
    state.phase = "sparse"
    state.chunks_total = counts["chunks"]
    run.progress(state)


def write_file(run: IndexRun, w: Changed, avg_len: float) -> None:
    """One changed file: its old version's points go (or are kept for another branch), its new
    points and manifest rows are written; a version another branch kept is revived instead."""
    ws, man, store, book, report = run.ws, run.ws.manifest, run.ws.store, run.book, run.report
    f, file_hash, chunks = w.file, w.file_hash, w.chunks
    now = time.time()
    book.checkout_has(f.path, file_hash)
    old = run.known.get(f.path)
    kept = man.version_ids(f.path, file_hash, live=False)
    # vectors of identical chunks in other versions, read before the old version's points go
    reuse = reusable_vectors(ws, f.path, chunks) if chunks and not kept else {}
    retain_old = book.leave(f.path, old.file_hash, file_hash) if old is not None else False
    language = language_for_path(f.path)
    kind = chunk_kind_for(f.path, language)
    new_row = file_row(f, file_hash, run.scan_started)
    tags = book.tags(f.path, file_hash)
    if kept:  # another branch's version, checked out again: retag and revive, no re-embedding
        store.set_payload_ids(kept, {"branch": tags})
        man.revive(new_row, language, kind, retain_old=retain_old)
        report.files_revived += 1
        report.files_indexed += 1
        ws.touch()
        return
    enc = _encoded(ws, w, avg_len)
    ids = enc.ids
    ensure_free_space(ws.probe_dir)  # before the write, while a margin is left (storage.disk_space)
    store.upsert([
        StorePoint(id=i, sparse=v, payload=_payload(ws, c, h, file_hash, tags, now), dense=reuse.get(k))
        for k, (i, c, h, v) in enumerate(zip(ids, chunks, enc.hashes, sparse_vectors(enc, chunks, avg_len)))
    ])
    man.replace_file(new_row, language, kind, _chunk_rows(f.path, enc, chunks), enc.packed, packed=True,
                     retain_old=retain_old, embedded={ids[k] for k in reuse},
                     fill_order=fill_order(f.path, kind, f.mtime_ns))
    report.chunks_reused += len(reuse)
    report.files_indexed += 1
    report.chunks_indexed += len(chunks)
    run.state.chunks_indexed += len(chunks)
    ws.touch()  # searches that run during a long scan must not be served from a stale cache


def write_new_files(run: IndexRun, batch: list[Changed], avg_len: float) -> None:
    """``write_file`` of a batch of a new index's files (``run.fresh``: no file has points or
    chunks to replace, keep or revive): every point of the batch upserted, then every row written
    in one manifest transaction. A stop in between leaves points the manifest does not list, which
    the next run's reconcile deletes (``index_dirty`` is set), as a stop inside ``write_file`` does."""
    ws, book, report = run.ws, run.book, run.report
    now = time.time()
    encoded = [_encoded(ws, w, avg_len) for w in batch]
    book.checkout_has_all([(w.file.path, w.file_hash) for w in batch])

    def points() -> Iterator[StorePoint]:
        for w, enc in zip(batch, encoded):
            tags = book.tags(w.file.path, w.file_hash)
            for i, c, h, v in zip(enc.ids, w.chunks, enc.hashes, sparse_vectors(enc, w.chunks, avg_len)):
                yield StorePoint(id=i, sparse=v, payload=_payload(ws, c, h, w.file_hash, tags, now))

    ensure_free_space(ws.probe_dir)  # before the writes, while a margin is left (storage.disk_space)
    stream = points()  # made a slice at a time: a batch's points never wait whole
    while part := list(islice(stream, UPSERT_POINTS)):
        ws.store.upsert(part)
    files = []
    for w, enc in zip(batch, encoded):
        f = w.file
        language = language_for_path(f.path)
        kind = chunk_kind_for(f.path, language)
        files.append(NewFile(file_row(f, w.file_hash, run.scan_started), language, kind,
                             _chunk_rows(f.path, enc, w.chunks), enc.packed, fill_order(f.path, kind, f.mtime_ns)))
    ws.manifest.add_files(files)
    chunks = sum(len(w.chunks) for w in batch)
    report.files_indexed += len(batch)
    report.chunks_indexed += chunks
    run.state.chunks_indexed += chunks
    ws.touch()


def _encoded(ws: Workspace, w: Changed, avg_len: float) -> Encoded:
    """What a worker made of ``w``'s chunks for the store, or the same made here."""
    if w.encoded is not None:
        return w.encoded
    return encode(ws.workspace_id, w.file_hash, w.chunks, avg_len)


def _chunk_rows(path: str, enc: Encoded, chunks: list[Chunk]) -> list[ChunkRow]:
    return [ChunkRow(i, path, k, c.start_line, c.end_line, h, c.symbol, c.symbol_kind, c.parent_symbol,
                     c.is_fragment) for k, (i, h, c) in enumerate(zip(enc.ids, enc.hashes, chunks))]
