"""``EngineHandle``: the one ``Engine`` a face talks to, whichever process does the work.

At start it takes the owner lock if it can (→ ``OwnerEngine``) or attaches to the owner
(→ ``AttachedEngine``). An attached handle polls the lock; when the owner goes away (exit, crash,
SIGKILL) one attached process wins the lock and promotes itself, and a call that found no owner
is retried until an owner answers or this process becomes one.
"""
from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

from ..errors import BackendUnavailable
from ..records import SearchRequest
from .client import AttachedEngine
from .lock import EngineLock
from .rpc import OwnerUnavailable
from .settings import EngineSettings

log = logging.getLogger("probe.engine")


class EngineHandle:
    """An ``Engine`` that fails over from attached to owner.

    ``background=True`` (``probe mcp``): the owner indexes, watches and serves attached
    processes. ``background=False`` (the CLI): with the lock free it answers in-process
    (``DirectEngine``) and never promotes; with an owner running it attaches.
    """

    def __init__(self, root: Path | str, settings: EngineSettings | None = None, *, background: bool = True,
                 probe_dir: Path | str | None = None):
        self.root = Path(os.path.realpath(root))
        # the data dir: root/.probe for a project, elsewhere for a library's index
        self.probe_dir = Path(os.path.realpath(probe_dir)) if probe_dir is not None else self.root / ".probe"
        self.settings = settings or EngineSettings.from_env()
        self.background = background
        self._lock = EngineLock(self.probe_dir)
        self._switch = threading.Lock()
        self._closed = threading.Event()
        self._monitor: threading.Thread | None = None
        self._impl = self._start_impl()

    @property
    def role(self) -> str:
        return self._impl.role

    @property
    def impl(self):
        return self._impl

    def _start_impl(self):
        if not self.background and not (self.probe_dir / "config.json").exists():
            from .direct import DirectEngine

            # raises WorkspaceNotFound, with the advice to index first
            return DirectEngine(self.root, probe_dir=self._probe_dir_arg)
        if self._lock.try_acquire():
            return self._become_owner()
        log.info("another Probe process owns %s; attaching to it", self.root)
        if self.background:
            self._monitor = threading.Thread(target=self._watch_owner, name="probe-takeover", daemon=True)
            self._monitor.start()
        return AttachedEngine(self.root, rpc_timeout_s=self.settings.rpc_timeout_s, probe_dir=self.probe_dir)

    @property
    def _probe_dir_arg(self) -> Path | None:
        return None if self.probe_dir == self.root / ".probe" else self.probe_dir

    def _become_owner(self):
        if not self.background:
            from .direct import DirectEngine

            try:
                return DirectEngine(self.root, probe_dir=self._probe_dir_arg)
            except BaseException:
                self._lock.release()
                raise
        from .service import OwnerEngine

        log.info("owning %s (pid %d)", self.root, os.getpid())
        return OwnerEngine(self.root, self.settings, probe_dir=self._probe_dir_arg).start()

    def _try_promote(self) -> bool:
        """Take the lock if it is free: an MCP process becomes the owner, the CLI answers directly.
        True when this process holds the workspace now."""
        with self._switch:
            if self._impl.role in ("owner", "direct"):
                return True
            if self._closed.is_set() or not self._lock.try_acquire():
                return False
            log.warning("the owner of %s went away; taking over (pid %d)", self.root, os.getpid())
            self._impl = self._become_owner()
            return True

    def _watch_owner(self) -> None:
        while not self._closed.wait(self.settings.takeover_poll_s):
            if self._impl.role == "owner" or self._try_promote():
                return

    def _call(self, method: str, *args, **kwargs):
        deadline = time.monotonic() + self.settings.attach_timeout_s
        while True:
            impl = self._impl
            try:
                return getattr(impl, method)(*args, **kwargs)
            except OwnerUnavailable as exc:
                if self._closed.is_set():
                    raise BackendUnavailable("Probe is shutting down") from exc
                if self._try_promote():
                    continue
                if time.monotonic() >= deadline:
                    raise BackendUnavailable(
                        f"another Probe process holds {self.probe_dir / 'engine.lock'} but does not answer "
                        f"({exc}); if it is stuck, stop it") from exc
                time.sleep(0.1)

    # -- Engine ------------------------------------------------------------------------------
    def search(self, request: SearchRequest | str, **options) -> dict:
        return self._call("search", SearchRequest.of(request, **options))

    def open_file(self, path: str, start_line: int | None = None, end_line: int | None = None) -> dict:
        return self._call("open_file", path, start_line, end_line)

    def index_status(self) -> dict:
        return self._call("index_status")

    def intel(self, tool: str, args: dict) -> dict:
        return self._call("intel", tool, args)

    def memory(self, action: str, args: dict) -> dict:
        return self._call("memory", action, args)

    def index_paths(self, paths: list[str]) -> dict:
        """Index these files now and return once they are searchable (lexically at least)."""
        return self._call("index_paths", list(paths))

    def rescan(self) -> dict:
        """A full incremental scan now, by whichever process owns the index; returns when done."""
        return self._call("rescan")

    def close(self) -> None:
        self._closed.set()
        with self._switch:
            impl = self._impl
        try:
            impl.close()
        finally:
            if self._monitor is not None:
                self._monitor.join(timeout=2)
            self._lock.release()

    def __enter__(self) -> EngineHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
