"""Optimizing an Edge shard beside the one in use, so that searches never wait behind it.

Qdrant's optimizers merge a shard's segments and drop the points deleted since (an edited file's
old chunks keep their slots until then). A new shard's segments are never indexed
(``edge.STORE_INDEXES``), so that is all they do; a shard made before also gets an on-disk BM25
index and an HNSW graph, ~30 s of CPU on the 2.9M-line monorepo (minutes under load). Either way
``EdgeShard.optimize()`` holds Python's GIL for its whole run (measured: a pure-Python thread got
no turn in 10 s), so called in the owner process it would stop every search for that long. It runs
in a child process on a copy instead:

1. the owner flushes the shard and copies its files (no write can come meanwhile: the owner's
   worker thread, the only writer, is the one doing this; a write counter checks it anyway);
2. a child process (``python -m probe_core.storage.edge_optimize COPY``, reniced) loads the copy
   and optimizes it; the owner keeps answering from the shard it has open;
3. the owner swaps the optimized files in (``EdgeStore.swap_in``): close, two renames, load — the
   only moment a search waits. A scan or a stop request meanwhile abandons the copy.

A crash between the two renames leaves ``<shard>.old`` and no ``<shard>``: opening the store puts
it back (``EdgeStore._open``). Points, payloads and answers are the same before and after.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from . import sparse_copy
from .disk_space import min_free_bytes

log = logging.getLogger("probe.engine")

COPY_SUFFIX = ".optimizing"  # the copy a child optimizes, beside the shard
OLD_SUFFIX = ".old"  # the shard's previous files during a swap


def _size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def optimize_aside(store, *, abandon: Callable[[], bool], poll_s: float = 0.2) -> bool | None:
    """Optimize ``store`` (an ``EdgeStore``) in a child process on a copy and swap the result in.
    True: swapped in; False: nothing to optimize (or no room for a copy); None: abandoned
    (``abandon()`` said so, the store was written meanwhile, or the child failed)."""
    copy = store.path.with_name(store.path.name + COPY_SUFFIX)
    shutil.rmtree(copy, ignore_errors=True)
    writes = store.flushed_writes()
    free = shutil.disk_usage(store.path).free
    if free < 2 * _size(store.path) + min_free_bytes():  # the copy, and what merging writes beside it
        log.info("store optimization skipped: %d MB free is too little for a copy", free // 2**20)
        return False
    try:
        sparse_copy.copy_tree(store.path, copy)  # holes kept: Qdrant preallocates its files sparsely
        if store.writes != writes or abandon():
            return None
        changed = _run_child(copy, abandon, poll_s)
        if not changed:
            return changed
        return True if store.swap_in(copy, writes) else None
    finally:
        shutil.rmtree(copy, ignore_errors=True)


def _run_child(copy: Path, abandon: Callable[[], bool], poll_s: float) -> bool | None:
    proc = subprocess.Popen([sys.executable, "-P", "-m", "probe_core.storage.edge_optimize", str(copy)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        while proc.poll() is None:
            if abandon():
                return None
            time.sleep(poll_s)
        out, err = proc.communicate()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if proc.returncode != 0:
        log.warning("store optimization failed in its child process: %s", err.decode(errors="replace")[-300:])
        return None
    return bool(json.loads(out.decode().strip().splitlines()[-1])["changed"])


def _child(path: str) -> int:
    """The child process: optimize the shard copy at ``path`` at a low priority."""
    import qdrant_edge as qe

    try:
        os.nice(10)
    except OSError:
        pass
    t = time.process_time()
    shard = qe.EdgeShard.load(path)
    try:
        changed = bool(shard.optimize())
    finally:
        shard.close()
    print(json.dumps({"changed": changed, "cpu_s": round(time.process_time() - t, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1]))
