"""Add, list, index and remove reference libraries (the CLI and the TUI call these).

Adding registers the library and prepares its index dir (nothing is written into the folder);
``index_library`` indexes it in this process when no other process owns it. Removing unregisters
the library and deletes everything Probe kept for it; a process that has it open (a running
``probe mcp``) is asked to let go first, and if it does not, nothing changes.
"""
from __future__ import annotations

import os
import shutil
import sqlite3
import time
from pathlib import Path

from ..config import WorkspaceConfig, save_config, user_data_dir
from ..engine.lock import EngineLock, read_owner_info
from ..errors import ProbeError
from ..storage.damage import readonly_uri
from . import registry
from .registry import LibraryError

REMOVE_WAIT_S = 10.0  # how long `remove` waits for running processes to close the library
MAX_FAILURES_LISTED = 20  # per library, in `list_libraries` (the count covers them all)
MAX_IN_STATUS = 50  # libraries in a status answer, whose size must not follow what the registry holds


def _counts(name: str) -> dict:
    """files / files_failed / chunks / chunks_embedded from the library's manifest (read-only); None
    if not indexed. ``files`` counts the documents that are searchable; ``files_failed`` those that
    could not be read (a broken or scanned PDF), whose reasons are in ``failures``."""
    path = registry.index_dir(name) / "manifest.sqlite"
    out = {"files": None, "files_failed": None, "chunks": None, "chunks_embedded": None, "failures": []}
    if not path.exists():
        return out
    try:
        db = sqlite3.connect(readonly_uri(path), uri=True, timeout=5)
        try:
            out["files"] = db.execute("SELECT COUNT(*) FROM files WHERE last_error IS NULL").fetchone()[0]
            failures = db.execute("SELECT path, last_error FROM files WHERE last_error IS NOT NULL "
                                  "ORDER BY path").fetchall()
            out["files_failed"] = len(failures)
            out["failures"] = [{"path": p, "error": e} for p, e in failures[:MAX_FAILURES_LISTED]]
            out["chunks"] = db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
            out["chunks_embedded"] = out["chunks"] - db.execute(  # the partial index of those without one
                "SELECT COUNT(*) FROM chunks WHERE has_dense=0").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:
        pass
    return out


def list_libraries() -> list[dict]:
    """Every registered library, by name: name, kind, path, mode, added_at, files, files_failed,
    failures, chunks, chunks_embedded."""
    libs = registry.load()
    return [{**entry, **_counts(name)} for name, entry in sorted(libs.items()) if not entry.get("removing")]


def with_library_summaries(status: dict) -> dict:
    """A project's ``index_status`` with the reference libraries searched beside it, failures
    included (``list_libraries``: the first ``MAX_IN_STATUS``, and ``libraries_total`` when there
    are more). The faces add them (``probe status``, the MCP ``index_status``, the app's dashboard), since
    the index knows nothing of libraries; only a full status of an open index gets them (one with
    ``indexed_branches``: not that of a damaged index, or of an owner still opening)."""
    if "indexed_branches" not in status:
        return status
    try:
        libraries = list_libraries()
    except ProbeError:  # an unreadable registry is `probe library list`'s error to report, not status's
        libraries = []
    status["libraries"] = libraries[:MAX_IN_STATUS]
    if len(libraries) > MAX_IN_STATUS:
        status["libraries_total"] = len(libraries)
    return status


def _prepare_index(name: str, root: Path, mode: str) -> None:
    """A fresh data dir for the library's index (a leftover one, not in use, is replaced)."""
    home = registry.library_home(name)
    idx = registry.index_dir(name)
    if idx.exists():
        if not EngineLock(idx).is_free():
            raise LibraryError(f"{idx} is in use by another Probe process; stop it and retry")
        shutil.rmtree(idx)
    cfg = WorkspaceConfig()
    cfg.extra["library"] = {"name": name, "mode": mode}
    home.mkdir(parents=True, exist_ok=True)
    save_config(root, cfg, idx)


MAX_STORED_LIBRARIES = 32  # libraries the `store` tool may create (folder libraries are added by hand)


def _register(name: str, kind: str, root: Path, mode: str, *, make_root: bool = False) -> dict:
    """Register library ``name`` and prepare its index dir, in one locked registry change.

    Whether this call creates the library's home is decided under the registry lock, so two
    concurrent adds of one name cannot both think they made it: the loser ("already exists")
    touches nothing, and a failure removes only what this call created. ``make_root``: create
    ``root`` too (a stored library's docs dir, inside the home)."""
    home = registry.library_home(name)
    created: list[Path] = []  # what this call created (at most the home), undone on failure

    def undo() -> None:
        for path in created:
            shutil.rmtree(path, ignore_errors=True)
        created.clear()

    def change(libs: dict) -> dict:
        stored = sum(1 for e in libs.values() if e.get("kind") == "stored")
        if kind == "stored" and name not in libs and stored >= MAX_STORED_LIBRARIES:
            # each library is an index a `probe mcp` keeps open: an agent inventing names must not grow them
            raise LibraryError(f"there are already {stored} stored libraries, the most Probe keeps "
                               f"({MAX_STORED_LIBRARIES}); store into an existing one (`probe library list`) or "
                               "remove one with `probe library remove NAME`")
        if name in libs:
            raise LibraryError(f"a library named {name!r} already exists ({libs[name]['path']}); "
                               "choose another name or `probe library remove` it first")
        for other in libs.values():
            if other["path"] == str(root):
                raise LibraryError(f"{root} is already registered as library {other['name']!r}")
        entry = registry.new_entry(name, kind, root, mode)
        if not home.exists():  # a home without a registry entry is a leftover: kept on failure
            created.append(home)
        try:
            if make_root:
                root.mkdir(parents=True, exist_ok=True)
            _prepare_index(name, root, mode)
        except BaseException:
            undo()
            raise
        libs[name] = entry
        return entry

    try:
        return registry.update(change)
    except BaseException:
        if created:  # writing the registry failed: undo, still under the lock, unless registered since
            def cleanup(libs: dict) -> None:
                if name not in libs:
                    undo()
            try:
                registry.update(cleanup)
            except Exception:  # noqa: BLE001 - the original error matters more; a leftover home is harmless
                pass
        raise


def add_library(path: str | Path, name: str, mode: str = "sync") -> dict:
    """Register the folder at ``path`` as library ``name``; returns the registry entry.

    ``mode``: ``sync`` mirrors the folder (deleted files leave the index), ``incremental`` keeps
    documents deleted from the folder searchable. Nothing is written into the folder. Index it
    with ``index_library`` (or let a running ``probe mcp`` pick it up)."""
    registry.validate_name(name)
    registry.validate_mode(mode)
    if not isinstance(path, (str, Path)) or not str(path).strip():
        raise LibraryError("library path must be a folder path")
    folder = Path(path).expanduser()
    if not folder.exists():
        raise LibraryError(f"{path}: no such folder")
    if not folder.is_dir():
        raise LibraryError(f"{path} is not a folder (a library is a folder of documents)")
    folder = folder.resolve()
    data = user_data_dir().resolve()
    if folder == data or data in folder.parents:
        raise LibraryError(f"{path} is inside Probe's own data dir ({data}); choose a folder of documents")
    return _register(name, "folder", folder, mode)


def ensure_stored_library(name: str) -> tuple[dict, bool]:
    """The stored library ``name`` (created empty if new). Returns (entry, created). A folder
    library of that name is an error: documents are stored only into stored libraries."""
    registry.validate_name(name)
    libs = registry.load()
    entry = libs.get(name)
    if entry is not None and entry.get("removing"):
        raise LibraryError(f"library {name!r} is being removed; try again in a moment")
    if entry is None:
        try:  # the docs dir is created inside the locked registry change, and removed if it fails
            return _register(name, "stored", registry.docs_dir(name).resolve(), "sync", make_root=True), True
        except LibraryError:
            if name in registry.load():  # created by another process meanwhile
                return ensure_stored_library(name)
            raise
    if entry["kind"] != "stored":
        raise LibraryError(f"library {name!r} is a folder library ({entry['path']}); `store` adds documents only to "
                           "stored libraries: use another library_name, or add the file to that folder")
    return entry, False


def index_library(name: str, *, progress=None, dense: bool = True) -> dict:
    """Index library ``name`` in this process (blocking); returns the index report.

    Raises ``LibraryError`` when another process owns its index (a running ``probe mcp`` indexes and
    watches it already)."""
    from ..indexing.indexer import index_workspace
    from ..workspace import Workspace

    entry = registry.get(name)
    idx = registry.index_dir(name)
    lock = EngineLock(idx)
    if not lock.try_acquire():
        pid = read_owner_info(idx).get("pid")
        raise LibraryError(f"library {name!r} is open in another Probe process (pid {pid or '?'}, e.g. a running "
                           "`probe mcp`), which indexes and watches it")
    try:
        ws = Workspace.open(entry["path"], probe_dir=idx)
        try:
            kwargs = {"dense": dense} if progress is None else {"dense": dense, "progress": progress}
            return index_workspace(ws, **kwargs).to_dict()
        finally:
            ws.close()
    finally:
        lock.release()


def _set_removing(name: str, flag: bool) -> None:
    def change(libs: dict) -> None:
        if name in libs:
            if flag:
                libs[name]["removing"] = True
            else:
                libs[name].pop("removing", None)
    registry.update(change)


def remove_library(name: str) -> dict:
    """Unregister library ``name`` and delete its index (and a stored library's documents). A
    library folder itself is never touched. Returns the removed entry."""
    entry = registry.get(name)
    idx = registry.index_dir(name)
    lock = EngineLock(idx)
    if not lock.try_acquire():
        _set_removing(name, True)  # running pools close the library when they see this
        deadline = time.monotonic() + REMOVE_WAIT_S
        while not lock.try_acquire():
            if time.monotonic() >= deadline:
                _set_removing(name, False)
                pid = read_owner_info(idx).get("pid")
                raise LibraryError(f"library {name!r} is open in another Probe process (pid {pid or '?'}) that did "
                                   "not let go of it; nothing was removed: stop that process and retry")
            time.sleep(0.2)
    home = registry.library_home(name)
    tomb = home.with_name(f".{home.name}.removed-{os.getpid()}-{time.monotonic_ns()}")

    def unregister(libs: dict) -> None:
        # under the registry lock: an `add` of the same name cannot create a home in between
        libs.pop(name, None)
        if home.exists():
            os.replace(home, tomb)

    try:
        try:
            registry.update(unregister)
        except BaseException:
            if tomb.exists() and not home.exists():  # the registry write failed: put it back
                os.replace(tomb, home)
            raise
        shutil.rmtree(tomb, ignore_errors=True)
    finally:
        lock.release()
    entry.pop("removing", None)
    return entry
