"""The dense phase: embed the chunks the manifest's ``pending_dense`` queue holds, in fill order
(``fill_order.py``), and attach their vectors to the points the lexical phase stored.

The queue lives in the manifest, so the phase is resumable: a run stopped here (or run with
``dense=False``) leaves the rest queued for the next one, or for the owner's background fill.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import EmbeddingError
from ..records import IndexProgress
from ..storage.disk_space import ensure_free_space
from ..workspace import Workspace
from .fill_order import rank_queue
from .run_state import ProgressCallback, _noop

DENSE_BATCH = 64  # chunks per store update; the embedder sub-batches by 4 (peak RSS, see docs)


def fill_dense(ws: Workspace, *, progress: ProgressCallback = _noop, state: IndexProgress | None = None,
               batch: int = DENSE_BATCH, should_stop: Callable[[], bool] = lambda: False) -> int:
    """Embed queued chunks, in fill order (``fill_order.py``), and attach their dense vectors.
    Returns how many were embedded."""
    man, store, emb = ws.manifest, ws.store, ws.embedder
    state = state or IndexProgress(phase="dense")
    done = 0
    with ws.write_lock:
        rank_queue(man)
    while not should_stop():
        with ws.write_lock:
            rows = man.pending_dense(batch)
            if not rows:
                break
            ids = [r[0] for r in rows]
            texts = [r[2] for r in rows]
            try:
                vectors = emb.embed_documents(texts)
            except EmbeddingError:
                vectors = _embed_one_by_one(ws, rows)
                keep = [k for k, v in enumerate(vectors) if v is not None]
                ids = [ids[k] for k in keep]
                vectors = np.stack([vectors[k] for k in keep]) if keep else np.zeros((0, emb.dimensions))
            # a text with no known token (a lone emoji) embeds to zero: cosine cannot use it, so the
            # chunk stays lexical-only, but it is done
            usable = np.linalg.norm(vectors, axis=1) > 1e-6 if len(ids) else np.zeros(0, bool)
            ensure_free_space(ws.probe_dir)
            store.set_dense([i for i, ok in zip(ids, usable) if ok], vectors[usable])
            man.mark_dense_done(ids)
            ws.touch(lexical=len(ids) < len(rows))  # a refused chunk marked its file failed
        done += len(ids)
        state.chunks_embedded += len(ids)
        progress(state)
    return done


def _embed_one_by_one(ws: Workspace, rows: list[tuple[str, str, str]]) -> list[np.ndarray | None]:
    """Isolate the chunk(s) an embedder refuses; mark their files and drop them from the queue."""
    out: list[np.ndarray | None] = []
    for pid, path, text in rows:
        try:
            out.append(ws.embedder.embed_documents([text])[0])
        except EmbeddingError as exc:
            out.append(None)
            with ws.manifest.transaction() as db:
                db.execute("DELETE FROM pending_dense WHERE point_id=?", (pid,))
                db.execute("UPDATE files SET last_error=? WHERE path=?", (f"embedding failed: {exc}"[:500], path))
    return out
