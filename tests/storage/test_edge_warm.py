"""A loaded Qdrant Edge shard's files are read into the page cache off the search path: the engine
drops them from the cache when a shard closes, so without this every payload a search returns from
a large shard was a read from the disk (``storage/edge_warm.py``). Real Qdrant Edge; residency read
with ``mincore`` on a fresh mapping (which faults nothing in)."""
from __future__ import annotations

import ctypes
import mmap
import os
import uuid
from pathlib import Path

import numpy as np

from probe_core import sparse
from probe_core.storage import edge_warm
from probe_core.storage.edge import EdgeStore
from probe_core.storage.protocol import StorePoint

DIM = 8
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]


def resident(path: Path) -> float:
    """Share of ``path``'s pages in the page cache."""
    size = path.stat().st_size
    if not size:
        return 1.0
    pages = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE
    with open(path, "rb") as fh:
        addr = _libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fh.fileno(), 0)
        assert addr not in (None, ctypes.c_void_p(-1).value), os.strerror(ctypes.get_errno())
        try:
            vec = (ctypes.c_ubyte * pages)()
            assert _libc.mincore(addr, size, vec) == 0, os.strerror(ctypes.get_errno())
            return sum(b & 1 for b in vec) / pages
        finally:
            _libc.munmap(addr, size)


def _store(tmp_path: Path) -> EdgeStore:
    rng = np.random.default_rng(3)
    store = EdgeStore(tmp_path / "shard", "chunks_test")
    store.ensure_collection(DIM)
    store.upsert([StorePoint(id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"p{k}")), sparse=sparse.embed_document(f"word{k} parse", 3.0),
                             dense=rng.normal(size=DIM).astype(np.float32),
                             payload={"workspace_id": "ws", "file_path": f"src/f{k}.py", "start_line": k, "end_line": k + 9})
                  for k in range(400)])
    store.close()
    return store


def _payload_pages(shard: Path) -> list[Path]:
    return [p for p in edge_warm.warm_files(shard) if p.parent.name == "payload_storage" and p.stat().st_size]


def test_a_loaded_shard_has_its_payloads_in_the_page_cache(tmp_path):
    store = _store(tmp_path)
    assert store.count() == 400  # loads the shard (a read that touches no payload)
    warming = getattr(store, "warming", None)
    if warming is not None:
        warming.join()
    pages = _payload_pages(store.path)
    assert pages and all(resident(p) == 1.0 for p in pages)
    store.close()


def test_the_payloads_are_read_first_and_the_reads_are_bounded(tmp_path):
    store = _store(tmp_path)
    files = edge_warm.warm_files(store.path)
    kinds = [p.relative_to(store.path).parts[2] for p in files]
    assert kinds[0] == "payload_storage" and kinds[-1].startswith("vector_storage-")
    assert kinds == sorted(kinds, key=lambda k: next(i for i, w in enumerate(edge_warm.WARM_ORDER) if k.startswith(w)))
    assert edge_warm.warm(store.path, lambda: True, max_bytes=4096) == 4096
    assert edge_warm.warm(store.path, lambda: False) == 0  # the shard closed: nothing read
