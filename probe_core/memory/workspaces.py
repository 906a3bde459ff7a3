"""The user-level workspace registry: one SQLite row per workspace Probe has indexed.

Where it lives. The embedded store (Qdrant Edge) is one shard per workspace with one owning
process, so it cannot hold a table shared by every workspace. The registry is therefore a
user-level SQLite database (WAL): ``user_data_dir()/workspaces.sqlite``, one row per workspace
(``workspace_id``, ``project_id``, ``root``, ``preset``, ``collection``, ``backend`` edge|qdrant,
``url`` without credentials, ``host``, ``first_seen_at``, ``last_seen_at``). A workspace on a Qdrant
server is *also* kept in that server's ``probe_workspaces`` collection (:mod:`.workspaces_server`).
``probe_core.registry`` lists and prunes them; the owner engine writes them (:mod:`.seen`).
"""
from __future__ import annotations

import socket
import sqlite3
import time
from contextlib import closing
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import user_data_dir
from ..errors import ProbeError
from ..private_dir import ensure_private_dir
from ..redaction import public_url

if TYPE_CHECKING:
    from ..workspace import Workspace

DB_NAME = "workspaces.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS workspaces (
    workspace_id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL DEFAULT '',
    root TEXT NOT NULL,
    preset TEXT NOT NULL DEFAULT '',
    collection TEXT NOT NULL DEFAULT '',
    backend TEXT NOT NULL DEFAULT 'edge',
    url TEXT,
    host TEXT NOT NULL DEFAULT '',
    first_seen_at REAL NOT NULL,
    last_seen_at REAL NOT NULL
)
"""
_COLS = ("workspace_id", "project_id", "root", "preset", "collection", "backend", "url", "host",
         "first_seen_at", "last_seen_at")


class RegistryError(ProbeError):
    """The registry cannot be read or written, or a prune argument is unusable."""


def this_host() -> str:
    return socket.gethostname()


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="seconds")


@dataclass
class WorkspaceRecord:
    workspace_id: str
    root: str
    last_seen_at: float
    project_id: str = ""
    preset: str = ""
    collection: str = ""
    backend: str = "edge"  # "edge" (embedded Qdrant Edge under .probe/) or "qdrant" (a server)
    url: str | None = None  # the server, without credentials (backend "qdrant" only)
    host: str = ""
    first_seen_at: float = 0.0

    def to_dict(self) -> dict:
        d = asdict(self)
        d["last_seen"] = iso(self.last_seen_at)
        return d

    def payload(self) -> dict:
        return {k: getattr(self, k) for k in _COLS}

    @classmethod
    def from_mapping(cls, data: dict) -> "WorkspaceRecord":
        return cls(**{k: data[k] for k in _COLS if data.get(k) is not None})


def record_for(ws: "Workspace", now: float | None = None) -> WorkspaceRecord:
    """The registry record of an open workspace, seen ``now``."""
    now = time.time() if now is None else now
    url = ws.config.qdrant_url
    return WorkspaceRecord(
        workspace_id=ws.workspace_id, root=str(ws.root), last_seen_at=now, project_id=ws.project_id,
        preset=ws.config.preset, collection=ws.collection, backend="qdrant" if url else "edge",
        url=public_url(url), host=this_host(), first_seen_at=now,
    )


class Registry:
    """The user-level registry database (``workspaces.sqlite``); every call is its own transaction."""

    def __init__(self, path: Path | str | None = None):
        self.path = Path(path) if path is not None else user_data_dir() / DB_NAME

    def _connect(self) -> sqlite3.Connection:
        try:
            ensure_private_dir(self.path.parent)
            conn = sqlite3.connect(self.path, timeout=10, isolation_level=None)
            conn.execute("PRAGMA busy_timeout = 10000")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute(_SCHEMA)
        except (sqlite3.Error, OSError) as exc:
            raise RegistryError(f"cannot open the workspace registry {self.path}: {exc}") from exc
        return conn

    def upsert(self, rec: WorkspaceRecord) -> None:
        """Insert or refresh ``rec`` (``first_seen_at`` of an existing row is kept)."""
        first = rec.first_seen_at or rec.last_seen_at
        with closing(self._connect()) as conn:
            conn.execute(
                f"INSERT INTO workspaces ({', '.join(_COLS)}) VALUES ({', '.join('?' * len(_COLS))}) "
                "ON CONFLICT(workspace_id) DO UPDATE SET project_id = excluded.project_id, root = excluded.root, "
                "preset = excluded.preset, collection = excluded.collection, backend = excluded.backend, "
                "url = excluded.url, host = excluded.host, last_seen_at = excluded.last_seen_at",
                (rec.workspace_id, rec.project_id, rec.root, rec.preset, rec.collection, rec.backend, rec.url,
                 rec.host, first, rec.last_seen_at))

    def get(self, workspace_id: str) -> WorkspaceRecord | None:
        with closing(self._connect()) as conn:
            row = conn.execute(f"SELECT {', '.join(_COLS)} FROM workspaces WHERE workspace_id = ?",
                               (workspace_id,)).fetchone()
        return WorkspaceRecord.from_mapping(dict(zip(_COLS, row))) if row else None

    def list(self) -> list[WorkspaceRecord]:
        if not self.path.exists():
            return []
        with closing(self._connect()) as conn:
            rows = conn.execute(f"SELECT {', '.join(_COLS)} FROM workspaces ORDER BY last_seen_at DESC").fetchall()
        return [WorkspaceRecord.from_mapping(dict(zip(_COLS, r))) for r in rows]

    def remove(self, workspace_id: str) -> bool:
        if not self.path.exists():
            return False
        with closing(self._connect()) as conn:
            return conn.execute("DELETE FROM workspaces WHERE workspace_id = ?", (workspace_id,)).rowcount > 0

    def set_last_seen(self, workspace_id: str, at: float) -> None:
        """Rewrite a workspace's ``last_seen_at`` (for tests and for importing records)."""
        with closing(self._connect()) as conn:
            if conn.execute("UPDATE workspaces SET last_seen_at = ? WHERE workspace_id = ?",
                            (at, workspace_id)).rowcount == 0:
                raise RegistryError(f"workspace {workspace_id} is not in the registry")


def registry_summary() -> dict:
    """``{path, known}`` for status displays; never raises."""
    reg = Registry()
    try:
        return {"path": str(reg.path), "known": len(reg.list())}
    except Exception:  # noqa: BLE001
        return {"path": str(reg.path), "known": None}
