"""Which failures mean a damaged Qdrant Edge shard (``storage/damage.py``): exactly the bare
``Exception``s the Edge raises for garbled or cut files, recognised by the Edge's own words with
the shard's path left out. Python's own errors (a user's file gone mid-read, an EOF, a bad
decode) are not store damage, and a folder called ``blockchain`` or ``video-decoder`` says
nothing about the store. Real shards, damaged as a disk or a stray write would."""
from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from probe_core.errors import IndexDamaged, IndexLocked
from probe_core.storage.damage import DAMAGE_FILE, store_damaged
from probe_core.storage.edge import EdgeStore

from .test_stores import DIM, _points, _query


def _shard(folder: Path) -> EdgeStore:
    s = EdgeStore(folder / ".probe" / "store" / "c", "c")
    s.ensure_collection(DIM)
    s.upsert(_points())
    return s


def _segment(s: EdgeStore) -> Path:
    return next((s.path / "segments").iterdir())


def _garble(path: Path, size: int = 4096) -> None:
    rng = random.Random(7)
    with open(path, "r+b") as f:
        f.write(bytes(rng.getrandbits(8) for _ in range(size)))


DAMAGE = {  # what each did to a real shard, and the Edge's words (0.9.0), in the test ids
    "id tracker garbled (Corrupted ID tracker mapping storage)":
        lambda s: _garble(_segment(s) / "mutable_id_tracker.mappings"),
    "WAL garbled (Can't init WAL: Illegal segment header)":
        lambda s: [_garble(p) for p in (s.path / "wal").iterdir() if p.is_file()],
    "payload page cut (Gridstore IO error: ... out of bounds)":
        lambda s: os.truncate(_segment(s) / "payload_storage" / "page_0.dat", 100),
    "BM25 storage garbled (expected value at line 1 column 1)":
        lambda s: [_garble(p, 8192) for p in (_segment(s) / "vector_storage-bm25").rglob("*") if p.is_file()],
}


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_real_shard_damage_is_damage_even_in_a_folder_named_blockchain(tmp_path, kind):
    s = _shard(tmp_path / "blockchain")  # "lock" in the path was read as another owner's lock
    s.close()
    DAMAGE[kind](s)
    again = EdgeStore(s.path, "c")
    with pytest.raises(IndexDamaged, match="vector store .* is damaged"):
        again.count()
        again.hybrid_query(_query("hash_password"))  # reads payloads
    assert (tmp_path / "blockchain" / ".probe" / DAMAGE_FILE).exists()


@pytest.mark.parametrize("exc", [
    FileNotFoundError(2, "No such file or directory", "src/auth.py"),  # a user's file gone mid-read
    EOFError("EOF when reading a line"),
    UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"),
], ids=["file gone", "eof", "decode"])
def test_python_errors_inside_a_store_call_are_not_damage(tmp_path, exc):
    s = _shard(tmp_path / "repo")
    try:
        with pytest.raises(type(exc)):
            with s._using():
                raise exc
        assert not (tmp_path / "repo" / ".probe" / DAMAGE_FILE).exists()
        assert s.count() == 5
    finally:
        s.close()


def test_a_second_owner_in_a_folder_named_video_decoder_is_locked_not_damaged(tmp_path):
    s = _shard(tmp_path / "video-decoder-eof")
    try:
        with pytest.raises(IndexLocked):
            EdgeStore(s.path, "c").count()
        # the same Edge words, met anywhere else, are no damage either ("decode", "eof" in the path)
        text = f"Service runtime error: failed to open WAL {s.path}/wal: Can't init WAL: Kind(WouldBlock)"
        assert store_damaged(s.path.parent.parent, s.path, Exception(text)) is None
        assert not (tmp_path / "video-decoder-eof" / ".probe" / DAMAGE_FILE).exists()
    finally:
        s.close()
