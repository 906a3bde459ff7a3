"""Helpers: `probe mcp` as a real subprocess, driven by the MCP SDK's stdio client."""
from __future__ import annotations

import os
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult

from ..indexing.test_indexer import expected_ids  # the ids a correct index holds

FAST_ENV = {
    "PROBE_DEBOUNCE_S": "0.5",
    "PROBE_STABLE_S": "0.1",
    "PROBE_LOG": "INFO",
    "PROBE_TAKEOVER_POLL_S": "0.2",
}


def server_params(root: Path, **env: str) -> StdioServerParameters:
    merged = {**FAST_ENV, **env}
    for var in ("PYTHONPATH", "PROBE_DATA_DIR"):  # the SDK passes only a minimal environment on
        if var in os.environ:
            merged.setdefault(var, os.environ[var])
    return StdioServerParameters(command=sys.executable, args=["-m", "probe_cli", "mcp", "--root", str(root)],
                                 env=merged, cwd=str(Path(__file__).resolve().parents[2]))


@asynccontextmanager
async def probe_mcp(root: Path, **env: str):
    """A connected client of a fresh `probe mcp --root ROOT` process (server stderr → a log file)."""
    log_dir = Path(root).parent / "server-logs"
    log_dir.mkdir(exist_ok=True)
    with open(log_dir / f"stderr-{time.monotonic_ns()}.log", "w") as errlog:
        async with Client(stdio_client(server_params(root, **env), errlog=errlog), mode="legacy",
                          read_timeout_seconds=120) as client:
            yield client


async def call(client: Client, tool: str, args: dict | None = None) -> CallToolResult:
    return await client.call_tool(tool, args or {})


async def status(client: Client) -> dict:
    r = await call(client, "index_status")
    assert not r.is_error, r.content[0].text
    return r.structured_content


async def wait_until(check, *, timeout: float, interval: float = 0.25, what: str = "condition"):
    """Poll the async ``check`` until it returns a truthy value; return that value."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = await check()
        if last:
            return last
        await anyio.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what} (last: {last!r})")


async def wait_indexed(client: Client, timeout: float = 240) -> dict:
    """Until the first scan and all dense vectors are done."""
    async def done():
        st = await status(client)
        return st if st.get("first_scan_done", True) and not st["indexing_in_progress"] else None

    return await wait_until(done, timeout=timeout, interval=0.5, what="indexing to finish")


async def search(client: Client, query: str, **kwargs) -> dict:
    r = await call(client, "search", {"query": query, **kwargs})
    assert not r.is_error, r.content[0].text
    return r.structured_content


def assert_index_exact(root: Path, timeout: float = 30) -> None:
    """Once every server has exited: store ids == manifest ids == ids from chunking the files."""
    from probe_core import Workspace
    from probe_core.engine.lock import EngineLock

    lock = EngineLock(Path(root) / ".probe")
    deadline = time.monotonic() + timeout
    while not lock.try_acquire():  # servers still shutting down
        assert time.monotonic() < deadline, "a probe mcp process still holds the workspace"
        time.sleep(0.1)
    try:
        ws = Workspace.open(root, create=False)
        try:
            store_ids = set(ws.store.all_ids())
            assert store_ids == set(ws.manifest.chunk_ids())
            assert store_ids == expected_ids(ws)
            assert ws.manifest.get_meta("index_dirty") == "0"
        finally:
            ws.close()
    finally:
        lock.release()
