"""``libraries.json``: the user's reference libraries, in the user data dir.

One JSON object ``{"version": 1, "libraries": {name: entry}}``; an entry is ``{name, kind
("folder"|"stored"), path, mode ("sync"|"incremental"), added_at}``. Every change is a
read-modify-write under an exclusive ``flock`` on ``libraries.lock``, written to a temporary file
and moved into place with ``os.replace``: two processes (a CLI and a ``probe mcp``) never lose each
other's changes, and a reader never sees half a file.

Each library has a folder ``<user data dir>/libraries/<name>/``: ``index/`` is its Probe data dir
(config.json, manifest.sqlite, store/, engine.lock), and a *stored* library's documents live in
``docs/``. A folder library's own folder is only ever read.
"""
from __future__ import annotations

import fcntl
import json
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ..config import user_data_dir
from ..errors import ProbeError
from ..indexing.change_detection import RACY_WINDOW_NS
from ..private_dir import ensure_private_dir

REGISTRY_FILE = "libraries.json"
LOCK_FILE = "libraries.lock"
KINDS = ("folder", "stored")
MODES = ("sync", "incremental")
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


class LibraryError(ProbeError):
    """A library request that cannot be done (bad name or path, unknown or duplicate library)."""


def validate_name(name: object) -> str:
    """A library name: 1-64 characters of lowercase letters, digits, ``-``, ``_`` and ``.``,
    starting with a letter or digit. Returns it, or raises ``LibraryError`` saying why not."""
    if not isinstance(name, str) or not name:
        raise LibraryError("library name must be a non-empty string (lowercase letters, digits, '-', '_', '.')")
    if not NAME_RE.match(name) or name in (".", ".."):
        raise LibraryError(
            f"invalid library name {name!r}: use 1-64 lowercase letters, digits, '-', '_' or '.', "
            "starting with a letter or digit (e.g. 'numpy-docs')")
    return name


def validate_mode(mode: object) -> str:
    if mode not in MODES:
        raise LibraryError(f"invalid library mode {mode!r}: choose 'sync' (mirror deletions) or "
                           "'incremental' (keep documents deleted from the folder)")
    return mode  # type: ignore[return-value]


def libraries_root() -> Path:
    return user_data_dir() / "libraries"


def library_home(name: str) -> Path:
    """``<user data dir>/libraries/<name>/``: everything Probe keeps for one library."""
    return libraries_root() / validate_name(name)


def index_dir(name: str) -> Path:
    """The library's Probe data dir (what ``.probe/`` is for a project)."""
    return library_home(name) / "index"


def docs_dir(name: str) -> Path:
    """Where a stored library's documents are written."""
    return library_home(name) / "docs"


def registry_path() -> Path:
    return user_data_dir() / REGISTRY_FILE


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise LibraryError(f"{path} is not readable JSON ({exc}); fix or delete it") from exc
    libs = data.get("libraries") if isinstance(data, dict) else None
    if not isinstance(libs, dict):
        raise LibraryError(f"{path} has no 'libraries' object; fix or delete it")
    return libs


def load() -> dict[str, dict]:
    """name → entry, as last written (no lock: the file is only ever replaced whole)."""
    return {name: dict(entry) for name, entry in _read(registry_path()).items()}


def registry_stamp() -> tuple[int, int, int, int] | None:
    """Cheap change detection for watchers: what changes whenever the registry file does, its
    ``(mtime, ctime, inode, size)`` (all 0 when absent). None while the file is younger than the
    racy window: a second write within the same clock tick could leave all four as they were, so the
    caller must read it again next time (as git does with racy index entries)."""
    try:
        info = registry_path().stat()
    except FileNotFoundError:
        return 0, 0, 0, 0
    if max(info.st_mtime_ns, info.st_ctime_ns) >= time.time_ns() - RACY_WINDOW_NS:
        return None
    return info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_size


@contextmanager
def _locked() -> Iterator[None]:
    base = ensure_private_dir(user_data_dir())
    fd = os.open(base / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _write(libs: dict[str, dict]) -> None:
    path = registry_path()
    tmp = path.with_name(f".{REGISTRY_FILE}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"version": 1, "libraries": libs}, indent=2, sort_keys=True) + "\n", "utf-8")
    os.replace(tmp, path)


def update(change: Callable[[dict[str, dict]], object]) -> object:
    """Apply ``change`` to the registry under the lock and write it back (only if it returns
    normally: an exception leaves the file as it was). Returns what ``change`` returned."""
    with _locked():
        libs = _read(registry_path())
        result = change(libs)
        _write(libs)
        return result


def get(name: str) -> dict:
    validate_name(name)
    libs = load()
    if name not in libs:
        known = ", ".join(sorted(libs)) or "none yet"
        raise LibraryError(f"unknown library {name!r} (registered: {known}); add one with "
                           "`probe library add PATH --name NAME` or the store tool")
    return libs[name]


def new_entry(name: str, kind: str, path: Path, mode: str) -> dict:
    return {"name": name, "kind": kind, "path": str(path), "mode": mode, "added_at": time.time()}
