"""Keeping the symbol graph in step with the index: per-file updates, a full rebuild, a lazy catch-up.

The indexer calls `file_changed` / `file_removed` for every file it (re)indexes or drops; both
swallow their own failures, because a graph problem must never fail indexing. `ensure_graph`
(run before every query) repairs whatever the hooks missed: an index made before the graph
existed, a hook that failed, files indexed by another process.
"""
from __future__ import annotations

import logging

from probe_core.per_workspace import PerWorkspace
from probe_core.scan import read_text
from probe_core.workspace import Workspace

from .extract import extract_file
from .model import FileGraph
from .rows import FileRows
from .words import words_of
from .store import GraphStore

log = logging.getLogger("probe.intel")

_BATCH = 200
_stores: PerWorkspace[GraphStore] = PerWorkspace(lambda ws: GraphStore(ws.probe_dir / "manifest.sqlite"),
                                                 close=GraphStore.close)


def graph_store(ws: Workspace) -> GraphStore:
    """The workspace's graph tables (one connection per workspace object, closed with it)."""
    return _stores.get(ws)


def update_file(ws: Workspace, path: str, text: str, file_hash: str) -> None:
    """Replace the graph rows of one file with those of `text`."""
    graph_store(ws).replace_files([(extract_file(path, text), file_hash, words_of(text))])


def file_changed(ws: Workspace, path: str, text: str, file_hash: str) -> None:
    """Indexer hook: never raises (the next query's `ensure_graph` retries the file). The rows are
    queued and written with the next files' (``GraphStore.queue``)."""
    try:
        graph_store(ws).queue(extract_file(path, text), file_hash, words_of(text))
    except Exception:  # noqa: BLE001 - a graph failure must not break indexing
        log.warning("symbol graph update failed for %s", path, exc_info=True)


def file_graphed(ws: Workspace, graph: FileGraph | FileRows, file_hash: str, words: set[bytes] | None) -> None:
    """``file_changed`` for a graph extracted elsewhere (the indexer's worker processes,
    ``indexing/prepare_pool.py``, send its rows made ready to write): never raises."""
    try:
        graph_store(ws).queue(graph, file_hash, words)
    except Exception:  # noqa: BLE001 - a graph failure must not break indexing
        log.warning("symbol graph update failed for %s", graph.path, exc_info=True)


def run_written(ws: Workspace) -> None:
    """Indexer hook at the end of a run's writes: the queued files written, and the id maps of a
    graph built from empty let go (``GraphStore._ids``). Never raises."""
    try:
        graph_store(ws).forget_ids()
    except Exception:  # noqa: BLE001 - the next query's ensure_graph writes what is left
        log.warning("writing the symbol graph's queued files failed", exc_info=True)


def file_removed(ws: Workspace, path: str) -> None:
    """Indexer hook for a deleted file: never raises."""
    try:
        graph_store(ws).remove_files([path])
    except Exception:  # noqa: BLE001
        log.warning("symbol graph removal failed for %s", path, exc_info=True)


def _indexed_files(ws: Workspace) -> dict[str, str]:
    """path -> file_hash of every file the manifest holds without an error."""
    return {p: row.file_hash for p, row in ws.manifest.files().items() if row.file_hash and not row.last_error}


def _graph(ws: Workspace, paths: list[str], wanted: dict[str, str]) -> int:
    store = graph_store(ws)
    done = 0
    for start in range(0, len(paths), _BATCH):
        batch = []
        for path in paths[start:start + _BATCH]:
            try:
                text = read_text(ws.root, path)
            except Exception as exc:  # noqa: BLE001 - vanished or unreadable since indexing
                log.info("symbol graph skips %s: %s", path, exc)
                continue
            try:
                batch.append((extract_file(path, text), wanted[path], words_of(text)))
            except Exception:  # noqa: BLE001 - a parser bug in one file must not stop the rest
                log.warning("symbol graph extraction failed for %s", path, exc_info=True)
        store.replace_files(batch)
        done += len(batch)
    return done


def rebuild_graph(ws: Workspace) -> dict[str, int]:
    """Build the graph from scratch for every indexed file (e.g. for an index older than the graph)."""
    wanted = _indexed_files(ws)
    store = graph_store(ws)
    try:
        store.remove_files(list(store.file_hashes()))
        files = _graph(ws, sorted(wanted), wanted)
    finally:
        ws.touch()  # search's graph evidence reads the graph: cached answers end (even after a failure)
    return {"files": files, **store.counts()}


def ensure_graph(ws: Workspace) -> dict[str, int]:
    """Bring the graph up to the manifest: graph new or changed files, drop removed ones. A change
    bumps the workspace's ``state_version``: search's graph evidence reads the graph, and its cached
    answers are keyed on the index state. Skipped while the lexical state is the one it last
    matched (``Workspace.lexical_version``: the dense fill does not move it)."""
    store = graph_store(ws)
    if store.in_step is not None and store.in_step == _step_key(ws, store):
        return {"updated": 0, "removed": 0}
    wanted, gone = store.out_of_step()  # a join in SQL: no per-file work in Python when in step
    stale = sorted(wanted)
    updated = 0
    try:
        if gone:
            store.remove_files(gone)
        if stale:  # a file that cannot be read is left stale without a change, not re-touched each call
            updated = _graph(ws, stale, wanted)
    except BaseException:
        ws.touch()  # some of it may be written
        raise
    if updated or gone:
        ws.touch()
    store.in_step = _step_key(ws, store)  # a file that could not be read is retried after the next change
    return {"updated": updated, "removed": len(gone)}


def _step_key(ws: Workspace, store: GraphStore) -> tuple:
    # terms_epoch: the graph's tables made anew by another connection (an older layout dropped)
    return ws.manifest.generation, ws.lexical_version, store.changes, store.terms_epoch()
