"""Every known workspace: the local registry merged with the ``probe_workspaces`` copies of the
Qdrant servers involved (each workspace's newest ``last_seen_at`` wins)."""
from __future__ import annotations

from typing import Callable

from .. import environment
from ..redaction import public_url
from ..memory.workspaces import Registry, WorkspaceRecord
from ..memory.workspaces_server import SERVER_COLLECTION, server_records

ConnectFn = Callable[[str], object]  # url → a qdrant_client.QdrantClient (or compatible)


def _default_connect(url: str):
    from qdrant_client import QdrantClient

    if url.startswith("local:"):
        return QdrantClient(location=":memory:") if url == "local::memory:" else QdrantClient(path=url[6:])
    return QdrantClient(url=url, api_key=environment.get("QDRANT_API_KEY") or None, timeout=10,
                        check_compatibility=False)


class _Servers:
    """One client per Qdrant URL for the length of a prune (local mode admits one client per path)."""

    def __init__(self, connect: ConnectFn | None):
        self._connect = connect or _default_connect
        self.clients: dict[str, object] = {}
        self.errors: dict[str, str] = {}

    def get(self, url: str):
        if url in self.errors:
            return None
        if url not in self.clients:
            try:
                self.clients[url] = self._connect(url)
            except Exception as exc:  # noqa: BLE001 - reported per workspace
                self.errors[url] = f"{type(exc).__name__}: {exc}"
                return None
        return self.clients[url]

    def fail(self, url: str, exc: BaseException) -> str:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        self.errors[url] = msg
        return msg

    def close(self) -> None:
        for client in self.clients.values():
            try:
                client.close()
            except Exception:  # noqa: BLE001
                pass
        self.clients.clear()


def _server_urls(local: list[WorkspaceRecord], extra: list[str] | None) -> list[str]:
    urls: list[str] = []
    for u in [*(extra or []), public_url(environment.get("QDRANT_URL")),
              *(r.url for r in local if r.backend == "qdrant")]:
        if u and u not in urls:
            urls.append(u)
    return urls


def _merged(registry: Registry, servers: _Servers, urls: list[str] | None,
            warnings: list[str]) -> list[WorkspaceRecord]:
    local = registry.list()
    by_id: dict[str, WorkspaceRecord] = {r.workspace_id: r for r in local}
    for url in _server_urls(local, urls):
        client = servers.get(url)
        if client is None:
            warnings.append(f"Qdrant at {url} is unreachable: {servers.errors.get(url)}")
            continue
        try:
            remote = server_records(client)
        except Exception as exc:  # noqa: BLE001
            warnings.append(f"cannot read {SERVER_COLLECTION} at {url}: {servers.fail(url, exc)}")
            continue
        for r in remote:
            r.backend, r.url = "qdrant", url
            mine = by_id.get(r.workspace_id)
            if mine is None or r.last_seen_at > mine.last_seen_at:
                by_id[r.workspace_id] = r
    return sorted(by_id.values(), key=lambda r: r.last_seen_at)


def list_workspaces(*, registry: Registry | None = None, server_urls: list[str] | None = None,
                    connect: ConnectFn | None = None, servers: bool = True) -> list[WorkspaceRecord]:
    """Every known workspace (local registry merged with the Qdrant servers' copies), oldest first."""
    registry = registry or Registry()
    if not servers:
        return sorted(registry.list(), key=lambda r: r.last_seen_at)
    srv = _Servers(connect)
    try:
        return _merged(registry, srv, server_urls, [])
    finally:
        srv.close()
