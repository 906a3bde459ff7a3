"""At most two glibc malloc arenas in a process that owns an index, and the lexical phase's freed
heap handed back before the model loads.

glibc gives each thread that meets a busy arena a new one (up to 8 per core), each keeping up to
64 MB of freed memory for itself. An owner has many threads (Qdrant Edge's searchers, ONNX
Runtime's pool, RPC connections, the watcher), so on the monorepo ~130 of its ~700 MB of
anonymous memory was arenas' slack: an owner that opened the monorepo's index and filled dense
vectors held 1,170 MB resident, 940 MB with two arenas (``docs/benchmarks.md``, "Owner memory").
Its hot allocations are Rust's and ONNX Runtime's own, so two arenas cost no measurable speed.
``MALLOC_ARENA_MAX`` set by the user wins. After the first scan the owner also asks glibc to
return free heap pages (``malloc_trim``: 9 ms; Django's lexical phase left 206 MB anonymous, 158
after), since the model and the fill come on top of whatever the scan left resident, and once more
after the model loads (ONNX Runtime's session creation leaves ~58 MB free in the heap). Elsewhere
(musl, macOS) nothing changes.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import sys
from collections.abc import Callable

from .. import environment

M_ARENA_MAX = -8  # glibc's mallopt parameter
ARENAS = 2


@functools.cache
def _libc() -> ctypes.CDLL | None:
    """The C library, loaded once; None off Linux or where it cannot be loaded."""
    if sys.platform != "linux":
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None


def limit_malloc_arenas() -> bool:
    """Cap this process's malloc arenas (before its threads start); whether it was applied."""
    libc = _libc()
    if libc is None or environment.get("MALLOC_ARENA_MAX"):
        return False
    try:
        return bool(libc.mallopt(M_ARENA_MAX, ARENAS))
    except AttributeError:  # not glibc
        return False


def release_free_memory() -> bool:
    """Return the heap's free pages to the system (glibc's ``malloc_trim``); whether it released any."""
    libc = _libc()
    try:
        return libc is not None and bool(libc.malloc_trim(0))
    except AttributeError:  # not glibc
        return False


def released_around(load: Callable[[], object]) -> None:
    """Run ``load`` (the owner's model load) with the heap's free pages handed back before it (what
    the lexical phase freed) and after it (what ONNX Runtime's session creation freed: ~58 MB)."""
    release_free_memory()
    try:
        load()
    finally:
        release_free_memory()
