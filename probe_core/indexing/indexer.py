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

One run is four phases over a shared ``IndexRun`` (``run_state.py``): decide what changed
(``decide_changes``: read, hash, chunk; by worker processes when many files changed,
``prepare_pool.py``), deletions (``remove_deleted``, run first), the lexical phase (``lexical.py``,
fed by the first phase in batches, so a run never holds every changed file's chunks) and the dense
phase (``dense.py``); ``_index_once`` only orders them between the run's opening and closing.

Branches (``branches.py``): a file version another branch still has is kept and retagged instead
of deleted, and a checked-out version that is already kept is revived instead of re-embedded.
"""
from __future__ import annotations

import json
import logging
import time
import traceback
from collections.abc import Iterator

from ..intel import build as intel_graph
from ..memory.identity import sync_project_id
from ..errors import IndexConfigMismatch, IndexDamaged, ProbeError
from ..records import IndexProgress, ScannedFile, short_hash
from ..scan import ScanResult
from ..storage.disk_space import ensure_free_space
from ..storage.manifest import FileRow
from ..storage.protocol import StoreFilter
from ..workspace import Workspace
from .branches import BranchBook, retag_all
from .change_detection import file_row, is_unchanged, scan_clock
from .dense import DENSE_BATCH, fill_dense
from . import lexical
from .lexical import CONTEXT_HEADER, index_text, reusable_vectors, write_lexical
from .prepare_pool import MIN_POOL_BYTES, Encoding, Prepared, dedupe, index_workers, prepare_all
from .run_state import Changed, IndexReport, IndexRun, ProgressCallback, _noop
from .store_check import check_store

__all__ = ["CONTEXT_HEADER", "DENSE_BATCH", "IndexReport", "ProgressCallback", "check_identity", "damage_of",
           "fill_dense", "index_text", "index_workspace", "indexed_text", "rebuild", "reconcile",
           "reusable_vectors"]

log = logging.getLogger("probe.index")

AVG_SAMPLE_FILES = 200  # files a new large index measures its BM25 average length on

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
    from ..storage.damage import wipe_index

    with ws.write_lock, ws.parts_closed():  # no reader reopens the old files meanwhile
        removed = wipe_index(ws.probe_dir, None if ws.config.qdrant_url else ws.collection)
        log.info("rebuild: removed %s", ", ".join(removed) or "nothing")
    with ws.write_lock:
        if ws.config.qdrant_url:  # the workspace's own collection: dropped whole (a new model's
            ws.store.drop_collection()  # dimensions too), then made again
            ws.store.ensure_collection(ws.embedder.dimensions)
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
        _prepare(ws, report)
        run, scan, scanned = open_run(ws, report=report, state=state, progress=progress, paths=paths)
        remove_deleted(run, scanned)  # deletions first: they need no reading
        _first_avg_len(run, scanned)
        # what changed, read and chunked, streamed into the lexical phase (sparse points) in batches
        write_lexical(run, decide_changes(run, scanned))
        _after_lexical(run, scan)
        if dense:  # the dense phase (resumable: the queue lives in the manifest)
            state.phase = "dense"
            progress(state)
            report.chunks_embedded = fill_dense(ws, progress=progress, state=state)
        _finish(run)
    state.phase = "done"
    progress(state)
    report.seconds = time.perf_counter() - t0
    return report


def _prepare(ws: Workspace, report: IndexReport) -> None:
    """Before any change: room on disk, the embedding identity, the collection, a store that agrees
    with the manifest (reconciled after an interrupted run or a lost store), then ``index_dirty``."""
    index_workers()  # a wrong PROBE_INDEX_WORKERS fails here, before the index is touched
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


def open_run(ws: Workspace, *, report: IndexReport | None = None, state: IndexProgress | None = None,
             progress: ProgressCallback = _noop, paths: list[str] | None = None,
             ) -> tuple[IndexRun, ScanResult, list[ScannedFile]]:
    """Scan the tree (only ``paths`` when given) and start a run over what it found: the run's
    shared state, the scan (for its skip summary) and the files the phases consider."""
    report = report or IndexReport()
    state = state or IndexProgress(phase="scanning")
    scanner = ws.profile.scan  # what the collection's kind lists (a library also lists PDFs)
    scan_started = scan_clock()  # before any stat: the reference of the racy window
    scan = scanner(ws.root, max_file_bytes=ws.config.max_file_bytes)
    report.files_skipped = len(scan.skipped)
    scanned = [f for f in scan.files if ws.profile.accepts(f.path)]  # a library: documents only
    if paths is not None:
        wanted = set(paths)
        scanned = [f for f in scanned if f.path in wanted]
    known = ws.manifest.files()
    report.files_seen = len(scanned)
    state.files_total = len(scanned)
    state.phase = "chunking"
    progress(state)
    run = IndexRun(ws, report, state, progress, BranchBook(ws), known, scan_started, paths,
                   fresh=not ws.manifest.has_chunks())
    return run, scan, scanned


def decide_changes(run: IndexRun, scanned: list[ScannedFile]) -> Iterator[Changed]:
    """Phase 1: which scanned files changed since the manifest's rows, each read, hashed and
    chunked, yielded in scan order (a touched file with the same text only gets its new stat; a
    file that fails to chunk is recorded as failed). Updates the symbol graph of every changed
    file. Many files to read are read, chunked and graphed by worker processes (``prepare_pool``)."""
    to_read = [f for f in scanned if not is_unchanged(run.known.get(f.path), f)]
    workers = _pool_size(run.ws, sum(f.size for f in to_read))
    prepared = None
    if workers:
        jobs = ((f.path, f.size, _same_as(run.known.get(f.path))) for f in to_read)
        avg = run.ws.manifest.get_meta("bm25_avg_len")  # a new index's is measured before (_first_avg_len)
        encoding = Encoding(run.ws.workspace_id, None if avg is None else float(avg))
        prepared = prepare_all(str(run.ws.root), jobs, max_bytes=run.ws.config.max_file_bytes, workers=workers,
                               encoding=encoding)
    try:
        for f in scanned:
            run.state.files_scanned += 1
            row = run.known.get(f.path)
            if is_unchanged(row, f):  # mtime, size, ctime, inode, device; a racy stat is never trusted
                if not row.last_error:  # a file that failed stays failed (counted as such), not "unchanged"
                    run.report.files_unchanged += 1
                continue
            changed = _decide_file(run, f, row) if prepared is None else _take_prepared(run, f, row, next(prepared))
            if changed is None:
                continue
            yield changed
            if run.state.files_scanned % 200 == 0:
                run.progress(run.state)
    finally:
        if prepared is not None:
            prepared.close()  # stops the workers, also when the writer failed


def _first_avg_len(run: IndexRun, scanned: list[ScannedFile]) -> None:
    """A new index's BM25 average length from up to ``AVG_SAMPLE_FILES`` files spread over the
    whole tree, when the lexical phase will stream more than one batch: its first batch alone
    would speak for one corner of a large tree (a tree that fits one batch is measured whole)."""
    ws, man = run.ws, run.ws.manifest
    to_read = [f for f in scanned if not is_unchanged(run.known.get(f.path), f)]
    if man.get_meta("bm25_avg_len") is not None or sum(f.size for f in to_read) <= lexical.BATCH_BYTES:
        return
    chunker = ws.profile.chunk
    keep = _pool_size(ws, sum(f.size for f in to_read)) == 0  # read here again later: keep what was read
    sample = []
    for f in to_read[::max(1, len(to_read) // AVG_SAMPLE_FILES)]:
        try:
            text = indexed_text(ws, f.path)
            chunks = dedupe(chunker(f.path, text))
        except Exception:  # noqa: BLE001 - the file's own phase records why it cannot be read or chunked
            continue
        sample.append(Changed(f, "", chunks))
        if keep:
            run.sampled[f.path] = (text, chunks)
    lexical.bm25_avg_len(man, sample)


def _pool_size(ws: Workspace, to_read: int) -> int:
    """Worker processes for this run's reading and chunking (``to_read``: bytes of source); 0 for
    the serial path: little to read, one CPU, or a profile whose reader and chunker are its own
    (a reference library's: ``prepares_in_workers`` false)."""
    if not ws.profile.prepares_in_workers or to_read < MIN_POOL_BYTES:
        return 0
    workers = index_workers()
    return workers if workers > 1 else 0


def _same_as(row: FileRow | None) -> str | None:
    """The hash a file's text may still have (only touched): a worker does not chunk it then."""
    return row.file_hash if row is not None and not row.last_error else None


def _decide_file(run: IndexRun, f: ScannedFile, row: FileRow | None) -> Changed | None:
    ws, man, report = run.ws, run.ws.manifest, run.report
    text, sampled = run.sampled.pop(f.path, (None, None))  # read by the average-length sample
    try:
        text = indexed_text(ws, f.path) if text is None else text
    except (OSError, ProbeError) as exc:  # vanished or unreadable between scan and read
        report.errors.append((f.path, str(exc)))
        return None
    file_hash = short_hash(text)
    if row is not None and row.file_hash == file_hash and not row.last_error:
        man.update_stat(file_row(f, file_hash, run.scan_started))  # content unchanged, only touched
        report.files_unchanged += 1
        return None
    kept = _kept(run, f.path, file_hash)  # revived below, not re-chunked
    try:
        chunker = ws.profile.chunk  # code by language; a library's documents as docs
        chunks = [] if kept else sampled if sampled is not None else dedupe(chunker(f.path, text))
    except Exception as exc:  # an unreadable document, or a chunker bug, must not stop the whole index
        _chunking_failed(run, f, isinstance(exc, ProbeError), str(exc), traceback.format_exc())
        return None
    intel_graph.file_changed(ws, f.path, text, file_hash)  # symbol graph; never raises
    return Changed(f, file_hash, chunks)


def _take_prepared(run: IndexRun, f: ScannedFile, row: FileRow | None, p: Prepared) -> Changed | None:
    """``_decide_file`` for a file a worker read, chunked and graphed: the same decisions."""
    man, report = run.ws.manifest, run.report
    if p.read_error is not None:
        report.errors.append((f.path, p.read_error))
        return None
    if row is not None and row.file_hash == p.file_hash and not row.last_error:
        man.update_stat(file_row(f, p.file_hash, run.scan_started))  # content unchanged, only touched
        report.files_unchanged += 1
        return None
    kept = _kept(run, f.path, p.file_hash)  # revived, not re-chunked
    if not kept and p.chunk_error is not None:
        _chunking_failed(run, f, *p.chunk_error)
        return None
    if p.graph is not None:
        intel_graph.file_graphed(run.ws, p.graph, p.file_hash, p.words)  # symbol graph; never raises
    else:
        log.warning("symbol graph update failed for %s\n%s", f.path, p.graph_error)
    return Changed(f, p.file_hash, [] if kept else p.chunks, None if kept else p.encoded)


def _kept(run: IndexRun, path: str, file_hash: str) -> bool:
    """Whether another branch kept this version of ``path`` (none in a new index: no query)."""
    return not run.fresh and bool(run.ws.manifest.version_ids(path, file_hash, live=False))


def _chunking_failed(run: IndexRun, f: ScannedFile, probe_error: bool, message: str, trace: str) -> None:
    """Record a file the chunker refused: failed in the manifest, its old points gone (or kept for
    another branch)."""
    # a ProbeError is the document's fault and its message says why: it is recorded and
    # reported with the run's counts; anything else is a bug in Probe: keep the traceback
    if probe_error:
        log.info("%s: %s", f.path, message)
    else:
        log.error("chunking %s failed\n%s", f.path, trace.rstrip())
    row, book = run.known.get(f.path), run.book
    book.checkout_has(f.path, None)  # the checkout has no indexable version of it
    retain = book.leave(f.path, row.file_hash, None) if row is not None else False
    reason = message if probe_error else f"chunking failed: {message}"
    run.ws.manifest.mark_error(file_row(f, "", run.scan_started), reason, retain=retain)
    run.failed_now += 1


def remove_deleted(run: IndexRun, scanned: list[ScannedFile]) -> None:
    """Phase 2: drop the files the manifest lists that the scan no longer found (among ``paths``
    only, on an incremental run): their points go, or are kept for another branch."""
    ws, man, book, known, paths = run.ws, run.ws.manifest, run.book, run.known, run.paths
    present = {f.path for f in scanned}
    candidates = known.keys() if paths is None else (set(paths) & known.keys())
    if ws.profile.keep_deleted:  # an incremental library keeps deleted documents
        candidates = set()
    for path in sorted(set(candidates) - present):
        book.checkout_has(path, None)
        man.remove_file(path, retain=book.leave(path, known[path].file_hash, None))
        intel_graph.file_removed(ws, path)  # symbol graph; never raises
        run.report.files_deleted += 1


def _after_lexical(run: IndexRun, scan: ScanResult) -> None:
    """Branch tags of unchanged files, and (full scans) kept versions of deleted branches pruned, the
    skip summary recorded, the symbol graph caught up; then the progress shows the lexical result."""
    ws, man, book, report, state = run.ws, run.ws.manifest, run.book, run.report, run.state
    report.files_retagged = book.tag_unchanged()  # after a checkout: unchanged files gain the branch
    if book.enabled:
        man.set_meta("last_branch", book.branch)
    if run.paths is None:
        report.branches = book.prune_deleted()
        man.set_meta("skipped_files", json.dumps(scan.skip_summary()))  # for `probe status`
        _repair_graph(ws)
    intel_graph.run_written(ws)
    ws.touch()
    counts = man.counts()
    state.chunks_indexed = counts["chunks"]
    state.chunks_embedded = counts["chunks_dense"]
    state.chunks_total = counts["chunks"]
    run.progress(state)


def _finish(run: IndexRun) -> None:
    """Flush the store, clear ``index_dirty`` and name the new state of the index."""
    ws, man, report = run.ws, run.ws.manifest, run.report
    ws.store.flush()
    man.set_meta("index_dirty", "0")
    # the generation names a state of the index (it keys search caches): a scan that changed
    # nothing keeps it, and only records when it ran
    changed = (report.files_indexed or report.files_deleted or report.chunks_embedded or report.files_retagged
               or run.failed_now or any(v for k, v in report.reconciled.items() if k != "cause")
               or report.branches or man.generation == 0)
    report.generation = man.bump_generation() if changed else man.mark_scanned()
    ws.touch()
    report.files_failed = man.counts()["files_failed"]
    report.errors.extend(e for e in man.errors() if e not in report.errors)


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
