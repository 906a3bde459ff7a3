"""The dense phase: embed the chunks the manifest's ``pending_dense`` queue holds, in fill order
(``fill_order.py``), and attach their vectors to the points the lexical phase stored.

The queue lives in the manifest, so the phase is resumable: a run stopped here (or run with
``dense=False``) leaves the rest queued for the next one, or for the owner's background fill.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import EmbeddingError, EmbeddingInterrupted, ProbeError
from ..records import IndexProgress, short_hash
from ..storage import manifest_codec
from ..storage.disk_space import ensure_free_space
from ..workspace import Workspace
from .encode import with_header
from .fill_order import rank_queue
from .run_state import ProgressCallback, _noop

DENSE_BATCH = 64  # chunks per store update; the embedder sub-batches by 4 (peak RSS, see docs)


def fill_dense(ws: Workspace, *, progress: ProgressCallback = _noop, state: IndexProgress | None = None,
               batch: int = DENSE_BATCH, should_stop: Callable[[], bool] = lambda: False) -> int:
    """Embed queued chunks, in fill order (``fill_order.py``), and attach their dense vectors.
    Returns how many were embedded.

    ``should_stop`` is asked before each batch and, within a batch, before each of the embedder's own
    sub-batches (``batch_size``, 4 for the in-process model); an embedder that can be interrupted
    (``interrupt``, called by the owner when a search starts) stops the sub-batch in flight too. What
    the batch embedded so far is stored; the rest stays queued."""
    man, store = ws.manifest, ws.store
    state = state or IndexProgress(phase="dense")
    done = 0
    with ws.write_lock:
        rank_queue(man)
    while not should_stop():
        with ws.write_lock:
            queued = man.pending_dense(batch)
            if not queued:
                break
            rows = texts_to_embed(ws, queued)
            if not rows:
                continue
            ids, vectors, tried = _embed_until(ws, rows, should_stop)
            # a text with no known token (a lone emoji) embeds to zero: cosine cannot use it, so the
            # chunk stays lexical-only, but it is done
            usable = np.linalg.norm(vectors, axis=1) > 1e-6 if len(ids) else np.zeros(0, bool)
            ensure_free_space(ws.probe_dir)
            store.set_dense([i for i, ok in zip(ids, usable) if ok], vectors[usable])
            man.mark_dense_done(ids)
            ws.touch(lexical=len(ids) < tried)  # a refused chunk marked its file failed
        done += len(ids)
        state.chunks_embedded += len(ids)
        progress(state)
    return done


def _embed_until(ws: Workspace, rows: list[tuple[str, str, str]],
                 should_stop: Callable[[], bool]) -> tuple[list[str], np.ndarray, int]:
    """Embed ``rows`` longest first (each sub-batch is padded to its own longest text, as the embedder
    orders them itself), one embedder sub-batch at a time until ``should_stop``. Returns the ids
    embedded, their vectors and how many rows were tried (refused ones included)."""
    emb = ws.embedder
    step = max(1, int(getattr(emb, "batch_size", len(rows)) or len(rows)))
    rows = sorted(rows, key=lambda r: -len(r[2]))
    ids: list[str] = []
    parts: list[np.ndarray] = []
    tried = 0
    for start in range(0, len(rows), step):
        if start and should_stop():
            break
        part = rows[start:start + step]
        try:
            vectors = emb.embed_documents([r[2] for r in part])
            ids.extend(r[0] for r in part)
        except EmbeddingInterrupted:  # a search needs the cores: this sub-batch stays queued
            break
        except EmbeddingError:
            try:
                one_by_one = _embed_one_by_one(ws, part)
            except EmbeddingInterrupted:
                break
            keep = [k for k, v in enumerate(one_by_one) if v is not None]
            ids.extend(part[k][0] for k in keep)
            vectors = np.stack([one_by_one[k] for k in keep]) if keep else np.zeros((0, emb.dimensions), np.float32)
        tried += len(part)
        parts.append(np.asarray(vectors, dtype=np.float32).reshape(-1, emb.dimensions))
    return ids, (np.concatenate(parts) if parts else np.zeros((0, emb.dimensions), np.float32)), tried


def texts_to_embed(ws: Workspace, rows: list[tuple[str, str, str | None]]) -> list[tuple[str, str, str]]:
    """``rows`` with every text: one queued as ``FROM_FILE`` is the chunk's lines read again from its
    file, under its header, as the lexical phase made it (``encode.py``), if they still hash to the
    chunk's hash. A chunk whose lines are no longer on disk (its file changed or went since) leaves
    the queue without a vector: the file's next index queues its new version."""
    spans = ws.manifest.queued_spans([pid for pid, _, text in rows if text is None])
    files: dict[str, list[str] | None] = {}  # read once per batch: a file's chunks are queued together
    out, stale = [], []
    for pid, path, text in rows:
        if text is None:
            span = spans.get(pid)
            lines = _lines(ws, path, files) if span is not None else None
            body = "\n".join(lines[span[1] - 1:span[2]]) if lines is not None else None
            if body is None or short_hash(body) != span[5]:
                stale.append(pid)
                continue
            text = with_header(path, span[4], span[3], body)
        out.append((pid, path, text))
    if stale:
        ws.manifest.drop_pending(stale)
    return out


def _lines(ws: Workspace, path: str, files: dict[str, list[str] | None]) -> list[str] | None:
    """The lines of ``path`` as the indexer reads it (None: unreadable or gone)."""
    if path not in files:
        try:
            files[path] = ws.profile.read(ws.root, path, max_bytes=ws.config.max_file_bytes).splitlines()
        except (OSError, ProbeError):
            files[path] = None
    return files[path]


def _embed_one_by_one(ws: Workspace, rows: list[tuple[str, str, str]]) -> list[np.ndarray | None]:
    """Isolate the chunk(s) an embedder refuses; mark their files and drop them from the queue."""
    out: list[np.ndarray | None] = []
    for pid, path, text in rows:
        try:
            out.append(ws.embedder.embed_documents([text])[0])
        except EmbeddingError as exc:
            out.append(None)
            with ws.manifest.transaction() as db:
                db.execute("DELETE FROM pending_dense WHERE point_id=?", (manifest_codec.pid(pid),))
                db.execute("UPDATE files SET last_error=? WHERE path=?", (f"embedding failed: {exc}"[:500], path))
    return out
