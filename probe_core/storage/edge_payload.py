"""Short payload keys in Qdrant Edge shards: the same payloads, stored in fewer bytes.

Qdrant stores each point's payload as its own JSON document, key names included: in Probe's chunk
payload the names were about a third of its ~470 bytes, and ``repo_id`` repeats ``workspace_id``
(the indexer writes both the same). A shard Probe creates stores each known field under a one-letter
key and leaves ``repo_id`` out when it equals ``workspace_id``; ``EdgeStore`` translates payloads,
filters and index names on the way in and back on the way out, so callers see the protocol's names
(``storage/protocol.py``). A shard made before keeps its long names (``PayloadKeys.LONG``): it is
recognised by its ``file_path`` index. The Qdrant server store is unchanged (a shared collection
keeps the readable names).
"""
from __future__ import annotations

# never change a letter: shards on disk hold them
_SHORT = {
    "workspace_id": "w", "project_id": "j", "branch": "b", "file_path": "f", "file_hash": "h",
    "chunk_hash": "c", "start_line": "s", "end_line": "e", "language": "l", "chunk_kind": "k",
    "symbol": "y", "symbol_kind": "t", "parent_symbol": "a", "is_fragment": "x", "indexed_at": "i",
}
_LONG = {v: k for k, v in _SHORT.items()}


class PayloadKeys:
    """The key names one shard stores: short (a shard Probe creates now) or long (made before)."""

    def __init__(self, short: bool):
        self.short = short

    def field(self, name: str) -> str:
        """The stored name of a payload field (for filters and keyword indexes)."""
        return _SHORT.get(name, name) if self.short else name

    def encode(self, payload: dict) -> dict:
        if not self.short:
            return dict(payload)
        out = {_SHORT.get(k, k): v for k, v in payload.items()}
        if "repo_id" in out and out["repo_id"] == payload.get("workspace_id"):
            del out["repo_id"]  # derived again by ``decode``
        return out

    def decode(self, stored: dict | None) -> dict:
        if not self.short or not stored:
            return dict(stored or {})
        out = {_LONG.get(k, k): v for k, v in stored.items()}
        if "workspace_id" in out:
            out.setdefault("repo_id", out["workspace_id"])
        return out


PayloadKeys.LONG = PayloadKeys(short=False)
PayloadKeys.SHORT = PayloadKeys(short=True)
