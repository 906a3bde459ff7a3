"""Short payload keys in Qdrant Edge shards: the same payloads, stored in fewer bytes.

Qdrant stores each point's payload as its own JSON document, key names included: in Probe's chunk
payload the names were about a third of its ~470 bytes, and ``repo_id`` repeats ``workspace_id``
(the indexer writes both the same). A shard Probe creates stores each known field under a one-letter
key and leaves ``repo_id`` out when it equals ``workspace_id``; ``EdgeStore`` translates payloads,
filters and index names on the way in and back on the way out, so callers see the protocol's names
(``storage/protocol.py``). A shard made before keeps its long names (``PayloadKeys.LONG``): it is
recognised by its ``file_path`` index. The Qdrant server store is unchanged (a shared collection
keeps the readable names).

A shard holds one workspace, so a new one (lean, ``PayloadKeys.lean``) also leaves out of every
point what is one value for the whole shard, ``workspace_id`` and ``project_id``: they are kept once
beside it (``ShardIds``, ``probe_ids.json`` in the shard's folder), given back on every payload read,
and a filter on them selects every point or none. ``indexed_at``, read by nothing, is not stored.
Measured on 40k of the monorepo's chunk payloads: payload storage 29 % smaller (Qdrant keeps each
LZ4-compressed payload in 128-byte blocks: most now fit two instead of three) and keyword indexes a
third smaller (no ``workspace_id`` index). A short-key shard made before is recognised by its
``workspace_id`` index and keeps its layout (``PayloadKeys.SHORT``).

A lean shard also leaves out what a chunk's point id or the manifest already holds, and the fields
that are empty: ``file_hash`` when the id carries it (``records.point_id``), ``chunk_hash`` then
too (search reads it from the manifest for the hits it returns, to tell a stale range), ``symbol``,
``symbol_kind`` and ``parent_symbol`` when None, ``is_fragment`` when false. Qdrant keeps each
payload in 128-byte blocks: on the monorepo, 46 % of the points then fit one block instead of two
(payload storage 37.4 → 29.3 MB allocated). ``decode`` gives every one of them back, so callers see the
same payloads; points stored before keep theirs.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from ..records import file_hash_of

# never change a letter: shards on disk hold them
_SHORT = {
    "workspace_id": "w", "project_id": "j", "branch": "b", "file_path": "f", "file_hash": "h",
    "chunk_hash": "c", "start_line": "s", "end_line": "e", "language": "l", "chunk_kind": "k",
    "symbol": "y", "symbol_kind": "t", "parent_symbol": "a", "is_fragment": "x", "indexed_at": "i",
}
_LONG = {v: k for k, v in _SHORT.items()}


# fields a lean shard does not store on its points: one value for the whole shard, or never read back
_LEFT_OUT = frozenset({"workspace_id", "repo_id", "project_id", "indexed_at"})
_SHARED = ("workspace_id", "project_id")  # the ones kept once, in ``ShardIds``
# a lean shard's chunk fields stored only when they differ from these (``decode`` gives them back)
_EMPTY = {"symbol": None, "symbol_kind": None, "parent_symbol": None, "is_fragment": False}
_FROM_ID = frozenset({"file_hash", "chunk_hash"})  # left out when the point's id carries the file's version


class ShardIds:
    """The workspace and project ids every point of a lean shard has, kept in a file beside it."""

    FILE = "probe_ids.json"

    def __init__(self, shard_dir: Path):
        self.path = Path(shard_dir) / self.FILE
        try:
            found = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):  # none yet (no point written), or unreadable: learnt at the next write
            found = {}
        self.values = {k: found[k] for k in _SHARED if isinstance(found.get(k), str)}

    def note(self, payloads) -> None:
        """Record the ids these payloads carry before they are written. The latest wins: a project
        re-keyed, or a workspace given a new id under the same ``.probe/`` (its ``config.json``
        deleted), takes over the shard's points instead of leaving them behind a filter."""
        new = dict(self.values)
        for payload in payloads:
            new.update({k: payload[k] for k in _SHARED if isinstance(payload.get(k), str)})
        if new != self.values:
            tmp = self.path.with_name(self.FILE + ".tmp")
            tmp.write_text(json.dumps(new), encoding="utf-8")
            os.replace(tmp, self.path)
            self.values = new

    def selects(self, field: str, value: str | None) -> bool:
        """Whether a filter on ``field`` (``workspace_id``/``project_id``) keeps this shard's points."""
        return not value or self.values.get(field, value) == value


class PayloadKeys:
    """The key names one shard stores: short (a shard Probe creates now, lean: with ``ids``), or
    long (made before)."""

    def __init__(self, short: bool, ids: ShardIds | None = None):
        self.short = short
        self.ids = ids

    @property
    def lean(self) -> bool:
        return self.ids is not None

    def field(self, name: str) -> str:
        """The stored name of a payload field (for filters and keyword indexes)."""
        return _SHORT.get(name, name) if self.short else name

    def encode(self, payload: dict, pid: str | None = None) -> dict:
        """``payload`` as this shard stores it; ``pid``: the point's id, for a whole chunk payload
        (an upsert), None for a partial one (``set_payload``: every key given is stored)."""
        if not self.short:
            return dict(payload)
        if self.ids is not None:
            left_out = _LEFT_OUT
            if pid is not None and "file_path" in payload:
                left_out = left_out | {k for k, v in _EMPTY.items() if k in payload and payload[k] == v}
                if payload.get("file_hash") is not None and file_hash_of(pid) == payload["file_hash"]:
                    left_out = left_out | _FROM_ID
            return {_SHORT.get(k, k): v for k, v in payload.items() if k not in left_out}
        out = {_SHORT.get(k, k): v for k, v in payload.items()}
        if "repo_id" in out and out["repo_id"] == payload.get("workspace_id"):
            del out["repo_id"]  # derived again by ``decode``
        return out

    def decode(self, stored: dict | None, pid: str | None = None) -> dict:
        """A stored payload as callers read it; ``pid``: the point's id (a chunk's version)."""
        if not self.short or not stored:
            return dict(stored or {})
        out = {_LONG.get(k, k): v for k, v in stored.items()}
        if self.ids is not None:
            out.update(self.ids.values)
            if "file_path" in out:
                for key, empty in _EMPTY.items():
                    out.setdefault(key, empty)
                if "file_hash" not in out and pid is not None and (version := file_hash_of(pid)):
                    out["file_hash"] = version
        if "workspace_id" in out:
            out.setdefault("repo_id", out["workspace_id"])
        return out


PayloadKeys.LONG = PayloadKeys(short=False)
PayloadKeys.SHORT = PayloadKeys(short=True)
