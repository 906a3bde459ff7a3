"""One language-server process per (workspace root, server), driven by pygls's `LanguageClient`.

The process starts on the first request, is checked before each one (a dead server is restarted,
once per request), stops after `PROBE_LSP_IDLE_S` idle seconds (default 300), when its workspace
closes (`close_root`) and at interpreter exit. pygls is asyncio: every session shares one event
loop in a daemon thread, and callers (sync, any thread) wait on it with a timeout.
"""
from __future__ import annotations

import asyncio
import atexit
import collections
import concurrent.futures
import contextlib
import os
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

from ... import environment
from ...errors import ProbeError
from .servers import ServerSpec

T = TypeVar("T")
RETRY_AFTER_FAILED_START_S = 60.0  # a server that cannot start is not retried on every query
STOP_GRACE_S = 2.0


class LspError(ProbeError):
    """The server could not answer; the caller falls back to the tree-sitter graph."""


def idle_seconds() -> float:
    return float(environment.get("PROBE_LSP_IDLE_S") or 300)


_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


def _event_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _loop_lock:
        if _loop is None:
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="probe-lsp", daemon=True).start()
        return _loop


def _wait(coro: Awaitable[T], timeout: float, what: str) -> T:
    fut = asyncio.run_coroutine_threadsafe(coro, _event_loop())
    try:
        return fut.result(timeout)
    except concurrent.futures.TimeoutError as exc:
        fut.cancel()
        raise LspError(f"{what} timed out after {timeout:g}s") from exc


class LspSession:
    def __init__(self, root: Path, spec: ServerSpec, argv: list[str]) -> None:
        self.root, self.spec, self.argv = root, spec, argv
        self.client: LanguageClient | None = None
        self.capabilities: lsp.ServerCapabilities | None = None
        self.stderr: collections.deque[str] = collections.deque(maxlen=20)
        self.last_used = time.monotonic()
        self._lock = threading.RLock()  # one request at a time: didOpen/request/didClose stay together
        self._idle_timer: threading.Timer | None = None
        self._failed: tuple[float, str] | None = None

    @property
    def pid(self) -> int | None:
        proc = self.client._server if self.client else None
        return proc.pid if proc else None

    @property
    def alive(self) -> bool:
        c = self.client
        return c is not None and not c.stopped and c._server is not None and c._server.returncode is None

    def request(self, fn: Callable[[LanguageClient], Awaitable[T]], timeout: float) -> T:
        """`await fn(client)` on a live server; if the server died before or during it, restart once."""
        with self._lock:
            for attempt in (0, 1):
                self._ensure_started(timeout)
                try:
                    result = _wait(fn(self.client), timeout, f"{self.spec.name} request")
                except LspError:
                    self.stop()  # a hung server is not trusted with the next question
                    raise
                except Exception as exc:  # noqa: BLE001 - any client/server error means "no answer"
                    if self.alive or attempt:
                        raise LspError(f"{self.spec.name}: {exc}") from exc
                    continue  # it crashed under us: start it again and ask once more
                self.last_used = time.monotonic()
                self._arm_idle_timer()
                return result
        raise AssertionError("unreachable")

    def _ensure_started(self, timeout: float) -> None:
        if self.alive:
            return
        if self._failed and time.monotonic() - self._failed[0] < RETRY_AFTER_FAILED_START_S:
            raise LspError(self._failed[1])
        self.stop()
        try:
            _wait(self._start(), timeout, f"starting {self.spec.name}")
        except Exception as exc:  # noqa: BLE001
            reason = str(exc) if isinstance(exc, LspError) else f"could not start {self.spec.name}: {exc}"
            if self.stderr:
                reason += f" (stderr: {self.stderr[-1][:200]})"
            self._failed = (time.monotonic(), reason)
            self.stop()
            raise LspError(reason) from exc
        self._failed = None

    async def _start(self) -> None:
        self.client = client = LanguageClient("probe", "0.1.0")
        for method in (lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, lsp.WINDOW_LOG_MESSAGE, lsp.WINDOW_SHOW_MESSAGE):
            client.feature(method)(_ignore)  # notifications nobody reads here
        await client.start_io(*self.argv, cwd=str(self.root))
        asyncio.create_task(self._drain_stderr(client._server.stderr))  # a full pipe would block the server
        caps = lsp.ClientCapabilities(text_document=lsp.TextDocumentClientCapabilities(
            references=lsp.ReferenceClientCapabilities(),
            implementation=lsp.ImplementationClientCapabilities(link_support=True),
            call_hierarchy=lsp.CallHierarchyClientCapabilities(),
        ))
        uri = self.root.as_uri()
        result = await client.initialize_async(lsp.InitializeParams(
            process_id=os.getpid(), root_uri=uri, root_path=str(self.root), capabilities=caps,
            workspace_folders=[lsp.WorkspaceFolder(uri=uri, name=self.root.name)],
            client_info=lsp.ClientInfo(name="probe")))
        self.capabilities = result.capabilities
        client.initialized(lsp.InitializedParams())

    async def _drain_stderr(self, stream: Any) -> None:
        while stream is not None and (line := await stream.readline()):
            self.stderr.append(line.decode("utf-8", "replace").rstrip())

    def _arm_idle_timer(self) -> None:
        if self._idle_timer:
            self._idle_timer.cancel()
        self._idle_timer = threading.Timer(idle_seconds(), self._stop_if_idle)
        self._idle_timer.daemon = True
        self._idle_timer.start()

    def _stop_if_idle(self) -> None:
        with self._lock:
            if time.monotonic() - self.last_used >= idle_seconds() - 0.05:
                self.stop()

    def stop(self) -> None:
        """shutdown + exit, then kill whatever is still running; safe to call at any time."""
        with self._lock:
            if self._idle_timer:
                self._idle_timer.cancel()
                self._idle_timer = None
            client, self.client = self.client, None
            if client is not None:
                with contextlib.suppress(Exception):
                    _wait(_close(client), STOP_GRACE_S * 3, "stopping")


def _ignore(*_args) -> None:
    return None


async def _close(client: LanguageClient) -> None:
    proc = client._server
    if proc is not None and proc.returncode is None and not client.stopped:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.shutdown_async(None), STOP_GRACE_S)
            client.exit(None)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(proc.wait(), STOP_GRACE_S)
    if proc is not None and proc.returncode is None:
        proc.kill()
    with contextlib.suppress(Exception):
        await asyncio.wait_for(client.stop(), STOP_GRACE_S)


_sessions: dict[tuple[Path, str], LspSession] = {}
_sessions_lock = threading.Lock()


def session_for(root: Path, spec: ServerSpec, argv: list[str]) -> LspSession:
    key = (Path(root), " ".join(argv))
    with _sessions_lock:
        if key not in _sessions:
            _sessions[key] = LspSession(Path(root), spec, argv)
        return _sessions[key]


def close_root(root: Path) -> None:
    """Stop the servers of one workspace (its `close()` calls this)."""
    with _sessions_lock:
        gone = [_sessions.pop(k) for k in list(_sessions) if k[0] == Path(root)]
    for s in gone:
        s.stop()


def close_all() -> None:
    with _sessions_lock:
        gone = list(_sessions.values())
        _sessions.clear()
    for s in gone:
        s.stop()


atexit.register(close_all)
