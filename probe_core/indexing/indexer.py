"""Incremental indexing: scan → skip unchanged → chunk → sparse points → dense fill-in.

Lexical search must not wait for a CPU transformer, so indexing runs in two phases: every changed
file's chunks are stored with their BM25 sparse vectors first (searchable within seconds), and
dense vectors are attached afterwards in batches from the manifest's ``pending_dense`` queue,
which survives restarts (resumable).

Crash safety: ``index_dirty`` is set in the manifest before the first store write of a run and
cleared after the last. A run that finds it set (the previous one was killed) first reconciles
the store against the manifest: points the manifest does not list are deleted, files whose points
are missing are redone. Per file the order is delete points → upsert points → commit the manifest
row, and point ids are deterministic, so redoing a file can never duplicate it.

Branches (``branches.py``): a file version another branch still has is kept and retagged instead
of deleted, and a checked-out version that is already kept is revived instead of re-embedded.
"""
from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .. import sparse
from ..chunking import chunk_kind_for, language_for_path
from ..intel import build as intel_graph
from ..memory.identity import sync_project_id
from ..errors import EmbeddingError, IndexConfigMismatch, IndexDamaged, ProbeError
from ..records import Chunk, IndexProgress, ScannedFile, short_hash
from ..storage.disk_space import ensure_free_space
from ..storage.manifest import ChunkRow
from ..storage.protocol import StoreFilter, StorePoint
from ..workspace import Workspace, point_id
from .branches import BranchBook, retag_all
from .change_detection import file_row, is_unchanged, scan_clock
from .fill_order import fill_order, rank_queue
from .store_check import check_store

log = logging.getLogger("probe.index")

ProgressCallback = Callable[[IndexProgress], None]
DENSE_BATCH = 64  # chunks per store update; the embedder sub-batches by 4 (peak RSS, see docs)


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


def _noop(_: IndexProgress) -> None:
    return None


def check_identity(ws: Workspace, *, adopt: bool) -> tuple[str, int]:
    """Compare the index's embedding identity with the current embedder.

    ``adopt``: record the identity when the index has none yet (first index).
    Raises ``IndexConfigMismatch`` when they differ.
    """
    emb = ws.embedder
    have_model = ws.manifest.get_meta("embedding_model_id")
    have_dims = ws.manifest.get_meta("embedding_dimensions")
    if have_model is None:
        if adopt:  # one transaction: a concurrent reader never sees half an identity
            with ws.manifest.transaction() as db:
                db.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", [
                    ("embedding_model_id", emb.model_id), ("embedding_dimensions", str(emb.dimensions)),
                    ("preset", ws.config.preset)])
        return emb.model_id, emb.dimensions
    if have_model != emb.model_id or int(have_dims or 0) != emb.dimensions:
        raise IndexConfigMismatch(
            f"the index was built with {have_model} ({have_dims}-d) but the current embedder is "
            f"{emb.model_id} ({emb.dimensions}-d); run `probe index --rebuild` to re-embed")
    return have_model, int(have_dims)


def rebuild(ws: Workspace) -> None:
    """Drop every point and manifest row of this workspace (``--rebuild``, and the repair of a
    damaged index): works from any state of ``.probe/``, since the files are deleted, not read."""
    from ..per_workspace import forget_workspace
    from ..storage.damage import wipe_index

    with ws.write_lock:
        for name in ("store", "manifest"):
            part = ws.__dict__.pop(name, None)
            if part is not None:
                try:
                    part.close()
                except Exception as exc:  # noqa: BLE001 - a damaged store may fail its last flush: it goes anyway
                    log.info("closing the %s before the rebuild failed: %s", name, exc)
        forget_workspace(ws)  # the graph's connection and the text cache belong to the old files
        removed = wipe_index(ws.probe_dir, None if ws.config.qdrant_url else ws.collection)
        log.info("rebuild: removed %s", ", ".join(removed) or "nothing")
        if ws.config.qdrant_url:
            ws.store.ensure_collection(ws.embedder.dimensions)
            ws.store.delete_workspace(ws.workspace_id)
        ws.touch()


def reconcile(ws: Workspace) -> dict:
    """Make the store hold exactly the points the manifest lists (after an unclean stop)."""
    store_ids = ws.store.all_ids(StoreFilter(workspace_id=ws.workspace_id))
    manifest_ids = ws.manifest.chunk_ids()
    live_ids = ws.manifest.chunk_ids(live=True)
    orphans = [i for i in store_ids if i not in manifest_ids]
    missing_files = sorted({p for i, p in live_ids.items() if i not in store_ids})
    broken_versions = ws.manifest.versions_of([i for i in manifest_ids if i not in live_ids and i not in store_ids])
    for start in range(0, len(orphans), 500):
        ws.store.delete_ids(orphans[start:start + 500])
    for path in missing_files:
        ws.manifest.forget_file_version(path)
    for path, file_hash in broken_versions:  # a kept version with missing points: drop it whole
        ws.store.delete_ids(ws.manifest.drop_version(path, file_hash))
    retagged = retag_all(ws, store_ids.keys())  # a stop between a tag change and its bookkeeping
    if orphans or missing_files or broken_versions:
        log.info("reconciled index: removed %d orphan points, redoing %d files, dropped %d kept versions",
                 len(orphans), len(missing_files), len(broken_versions))
    return {"orphans_removed": len(orphans), "files_redone": len(missing_files),
            "versions_dropped": len(broken_versions), "points_retagged": retagged}


def _payload(ws: Workspace, c: Chunk, file_hash: str, branch: list[str], now: float) -> dict:
    return {
        "workspace_id": ws.workspace_id,
        "repo_id": ws.workspace_id,
        "project_id": ws.project_id,
        "branch": branch,
        "file_path": c.path,
        "file_hash": file_hash,
        "chunk_hash": c.chunk_hash,
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


CONTEXT_HEADER = True  # measured on the dev set: see docs/benchmarks.md


def index_text(c: Chunk) -> str:
    """What BM25 and the embedder see: the chunk under a one-line header naming its file and symbol.

    A method body rarely says which file or class it lives in; the header gives both the lexical
    and the dense side that context (``src/auth.py · Hasher.check``).
    """
    if not CONTEXT_HEADER:
        return c.text
    name = ".".join(x for x in (c.parent_symbol, c.symbol) if x)
    return f"{c.path} · {name}\n{c.text}" if name else f"{c.path}\n{c.text}"


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


def _dedupe(chunks: list[Chunk]) -> list[Chunk]:
    """One chunk per (start, end): the point id is derived from the range."""
    seen: set[tuple[int, int]] = set()
    out = []
    for c in chunks:
        if (c.start_line, c.end_line) not in seen:
            seen.add((c.start_line, c.end_line))
            out.append(c)
    return out


def indexed_text(ws: Workspace, path: str) -> str:
    """A file's text as the indexer reads it: what it hashes (``short_hash``) into the manifest's
    ``file_hash`` and chunks. Raises ``OSError`` / ``ProbeError`` when it cannot be read."""
    return ws.profile.read(ws.root, path, max_bytes=ws.config.max_file_bytes)


def index_workspace(ws: Workspace, *, progress: ProgressCallback = _noop, dense: bool = True,
                    paths: list[str] | None = None) -> IndexReport:
    """Bring the index up to date with the files under ``ws.root``.

    ``dense=False`` stops after the lexical phase (dense vectors stay queued).
    ``paths`` limits the scan to those files (the watcher's incremental path); deletions are then
    detected only among them.

    Damaged index files (``storage/damage.py``: found now, or recorded by an earlier read) are
    repaired first by a full rebuild; damage found during the run rebuilds once and runs again.
    """
    with ws.write_lock:
        why = damage_of(ws)
        for attempt in (1, 2):
            if why is not None:
                log.warning("%s; rebuilding the index from the files", why.split("; run `probe")[0])
                rebuild(ws)
                paths = None  # everything is redone
            try:
                report = _index_once(ws, progress=progress, dense=dense, paths=paths)
            except IndexDamaged as exc:
                if attempt == 2:
                    raise
                why = str(exc)
                continue
            if why is not None:
                report.reconciled = {"cause": f"damaged index files ({why.split(' (', 1)[0]})",
                                     "rebuilt": "from the files"}
            return report
    raise AssertionError("unreachable")


def damage_of(ws: Workspace) -> str | None:
    """Why the workspace's index files cannot be trusted (recorded damage, or a manifest that fails
    its open check), or None."""
    from ..storage.damage import recorded_damage

    if (seen := recorded_damage(ws.probe_dir)) is not None:
        return seen
    try:
        _ = ws.manifest
    except IndexDamaged as exc:
        return str(exc)
    return None


def _index_once(ws: Workspace, *, progress: ProgressCallback, dense: bool, paths: list[str] | None) -> IndexReport:
    t0 = time.perf_counter()
    report = IndexReport()
    state = IndexProgress(phase="scanning")
    progress(state)
    with ws.write_lock:
        ensure_free_space(ws.probe_dir)  # before the store is opened: creating it maps 64 MB of WAL
        man, store = ws.manifest, ws.store
        check_identity(ws, adopt=True)
        store.ensure_collection(ws.embedder.dimensions)
        if man.get_meta("index_dirty") == "1":
            report.reconciled = {"cause": "an interrupted run", **reconcile(ws)}
        elif not (check := check_store(ws)).consistent:  # the store was lost behind our back
            log.info("%s; rebuilding them now", check.message())
            report.reconciled = {"cause": "points missing from the store", **reconcile(ws)}
        try:  # a project that gained a remote (or a second clone) is re-keyed in place
            sync_project_id(ws)
        except Exception as exc:  # noqa: BLE001 - never fail an index run over identity; retried next run
            log.warning("could not re-key project id: %s", exc)
        man.set_meta("index_dirty", "1")

        scanner = ws.profile.scan  # what the collection's kind lists (a library also lists PDFs)
        scan_started = scan_clock()  # before any stat: the reference of the racy window
        scan = scanner(ws.root, max_file_bytes=ws.config.max_file_bytes)
        report.files_skipped = len(scan.skipped)
        scanned = [f for f in scan.files if ws.profile.accepts(f.path)]  # a library: documents only
        if paths is not None:
            wanted = set(paths)
            scanned = [f for f in scanned if f.path in wanted]
        known = man.files()
        report.files_seen = len(scanned)
        state.files_total = len(scanned)
        state.phase = "chunking"
        progress(state)

        # 1. decide what changed, chunk it
        book = BranchBook(ws)
        failed_now = 0  # files that failed in this run (their rows changed)
        work: list[tuple[ScannedFile, str, list[Chunk]]] = []
        for f in scanned:
            state.files_scanned += 1
            row = known.get(f.path)
            if is_unchanged(row, f):  # mtime, size, ctime, inode, device; a racy stat is never trusted
                if not row.last_error:  # a file that failed stays failed (counted as such), not "unchanged"
                    report.files_unchanged += 1
                continue
            try:
                text = indexed_text(ws, f.path)
            except (OSError, ProbeError) as exc:  # vanished or unreadable between scan and read
                report.errors.append((f.path, str(exc)))
                continue
            file_hash = short_hash(text)
            if row is not None and row.file_hash == file_hash and not row.last_error:
                man.update_stat(file_row(f, file_hash, scan_started))  # content unchanged, only touched
                report.files_unchanged += 1
                continue
            kept = bool(man.version_ids(f.path, file_hash, live=False))  # revived below, not re-chunked
            try:
                chunker = ws.profile.chunk  # code by language; a library's documents as docs
                chunks = [] if kept else _dedupe(chunker(f.path, text))
            except Exception as exc:  # an unreadable document, or a chunker bug, must not stop the whole index
                # a ProbeError is the document's fault and its message says why: it is recorded and
                # reported with the run's counts; anything else is a bug in Probe: keep the traceback
                if isinstance(exc, ProbeError):
                    log.info("%s: %s", f.path, exc)
                else:
                    log.exception("chunking %s failed", f.path)
                book.checkout_has(f.path, None)  # the checkout has no indexable version of it
                retain = book.leave(f.path, row.file_hash, None) if row is not None else False
                reason = str(exc) if isinstance(exc, ProbeError) else f"chunking failed: {exc}"
                man.mark_error(file_row(f, "", scan_started), reason, retain=retain)
                failed_now += 1
                continue
            work.append((f, file_hash, chunks))
            intel_graph.file_changed(ws, f.path, text, file_hash)  # symbol graph; never raises
            if state.files_scanned % 200 == 0:
                progress(state)

        # 2. deletions
        present = {f.path for f in scanned}
        candidates = known.keys() if paths is None else (set(paths) & known.keys())
        if ws.profile.keep_deleted:  # an incremental library keeps deleted documents
            candidates = set()
        for path in sorted(set(candidates) - present):
            book.checkout_has(path, None)
            man.remove_file(path, retain=book.leave(path, known[path].file_hash, None))
            intel_graph.file_removed(ws, path)  # symbol graph; never raises
            report.files_deleted += 1

        # 3. lexical phase: sparse points for every changed file
        avg = man.get_meta("bm25_avg_len")
        if avg is None:
            avg_len = sparse.estimate_avg_len([index_text(c) for _, _, cs in work for c in cs])
            man.set_meta("bm25_avg_len", f"{avg_len:.2f}")
        else:
            avg_len = float(avg)
        state.phase = "sparse"
        state.chunks_total = sum(len(cs) for _, _, cs in work) + man.counts()["chunks"]
        progress(state)
        for f, file_hash, chunks in work:
            now = time.time()
            book.checkout_has(f.path, file_hash)
            old = known.get(f.path)
            kept = man.version_ids(f.path, file_hash, live=False)
            # vectors of identical chunks in other versions, read before the old version's points go
            reuse = reusable_vectors(ws, f.path, chunks) if chunks and not kept else {}
            retain_old = book.leave(f.path, old.file_hash, file_hash) if old is not None else False
            language = language_for_path(f.path)
            kind = chunk_kind_for(f.path, language)
            new_row = file_row(f, file_hash, scan_started)
            tags = book.tags(f.path, file_hash)
            if kept:  # another branch's version, checked out again: retag and revive, no re-embedding
                store.set_payload_ids(kept, {"branch": tags})
                man.revive(new_row, language, kind, retain_old=retain_old)
                report.files_revived += 1
                report.files_indexed += 1
                ws.touch()
                continue
            ids = [point_id(ws.workspace_id, f.path, c.start_line, c.end_line, file_hash) for c in chunks]
            ensure_free_space(ws.probe_dir)  # before the write, while a margin is left (storage.disk_space)
            store.upsert([
                StorePoint(id=i, sparse=sparse.embed_document(index_text(c), avg_len),
                           payload=_payload(ws, c, file_hash, tags, now), dense=reuse.get(k))
                for k, (i, c) in enumerate(zip(ids, chunks))
            ])
            man.replace_file(
                new_row, language, kind,
                [ChunkRow(i, f.path, k, c.start_line, c.end_line, c.chunk_hash, c.symbol, c.symbol_kind,
                          c.parent_symbol, c.is_fragment) for k, (i, c) in enumerate(zip(ids, chunks))],
                [index_text(c) for c in chunks], retain_old=retain_old, embedded={ids[k] for k in reuse},
                fill_order=fill_order(f.path, kind, f.mtime_ns),
            )
            report.chunks_reused += len(reuse)
            report.files_indexed += 1
            report.chunks_indexed += len(chunks)
            state.chunks_indexed += len(chunks)
            ws.touch()  # searches that run during a long scan must not be served from a stale cache
        report.files_retagged = book.tag_unchanged()  # after a checkout: unchanged files gain the branch
        if book.enabled:
            man.set_meta("last_branch", book.branch)
        if paths is None:
            report.branches = book.prune_deleted()
            man.set_meta("skipped_files", json.dumps(scan.skip_summary()))  # for `probe status`
            _repair_graph(ws)
        ws.touch()
        counts = man.counts()
        state.chunks_indexed = counts["chunks"]
        state.chunks_embedded = counts["chunks_dense"]
        state.chunks_total = counts["chunks"]
        progress(state)

        # 4. dense phase (resumable: the queue lives in the manifest)
        if dense:
            state.phase = "dense"
            progress(state)
            report.chunks_embedded = fill_dense(ws, progress=progress, state=state)
        store.flush()
        man.set_meta("index_dirty", "0")
        # the generation names a state of the index (it keys search caches): a scan that changed
        # nothing keeps it, and only records when it ran
        changed = (report.files_indexed or report.files_deleted or report.chunks_embedded or report.files_retagged
                   or failed_now or any(v for k, v in report.reconciled.items() if k != "cause")
                   or report.branches or man.generation == 0)
        report.generation = man.bump_generation() if changed else man.mark_scanned()
        ws.touch()
        report.files_failed = man.counts()["files_failed"]
        report.errors.extend(e for e in man.errors() if e not in report.errors)
    state.phase = "done"
    progress(state)
    report.seconds = time.perf_counter() - t0
    return report


def _repair_graph(ws: Workspace) -> None:
    """Graph every indexed file the symbol graph lacks or has at another version (a graph emptied by
    an upgrade's new ``GRAPH_VERSION``, an older index, a failed update). Search reads the graph too
    (graph evidence), so this cannot wait for the first code-intelligence call; it costs a comparison
    of hashes when the graph is current. Never raises: the graph is an addition to the index."""
    try:
        fixed = intel_graph.ensure_graph(ws)
    except Exception:  # noqa: BLE001 - code intelligence re-tries lazily (ensure_graph) at its next call
        log.warning("repairing the symbol graph failed", exc_info=True)
        return
    if fixed["updated"] or fixed["removed"]:
        log.info("symbol graph caught up: %d files graphed, %d removed", fixed["updated"], fixed["removed"])


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
