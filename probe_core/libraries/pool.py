"""The engines of the registered libraries, inside one process.

``probe mcp`` keeps a ``LibraryPool(background=True)``: at start it opens an engine per registered
library on a background thread (owner — indexing and watching the library's folder — or attached
to the process that owns it, exactly like a project), then re-reads ``libraries.json`` whenever
its stat changes (``registry.registry_stamp``), opening engines for new libraries and closing those removed (or being removed:
``remove_library`` asks running processes to let go this way). The CLI uses
``LibraryPool(background=False)``: engines open on first use, answer in-process or through a
running owner, and close with the pool.
"""
from __future__ import annotations

import logging
import threading

from .. import environment
from ..engine import EngineHandle, EngineSettings
from . import registry
from .registry import LibraryError

log = logging.getLogger("probe.libraries")


def open_library_engine(name: str, entry: dict, *, background: bool,
                        settings: EngineSettings | None = None) -> EngineHandle:
    """An engine for one library's index (root = its folder, data dir under the user data dir)."""
    return EngineHandle(entry["path"], settings, background=background, probe_dir=registry.index_dir(name))


def _active(libs: dict[str, dict]) -> dict[str, dict]:
    return {n: e for n, e in libs.items() if not e.get("removing")}


class LibraryPool:
    def __init__(self, settings: EngineSettings | None = None, *, background: bool = True,
                 poll_s: float | None = None):
        self.settings = settings or EngineSettings.from_env()
        self.background = background
        self.poll_s = poll_s if poll_s is not None else float(environment.get("PROBE_LIBRARY_POLL_S", "1.0"))
        self._engines: dict[str, EngineHandle] = {}
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._stamp: tuple[int, ...] | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> LibraryPool:
        """Open every registered library in the background and follow the registry."""
        self._thread = threading.Thread(target=self._follow, name="probe-libraries", daemon=True)
        self._thread.start()
        return self

    def _follow(self) -> None:
        while not self._stop.is_set():
            try:
                stamp = registry.registry_stamp()
                if stamp is None or stamp != self._stamp:  # None: written just now, look again next time
                    self._stamp = stamp
                    self.sync()
            except Exception:  # a broken registry must not take the server down; retried next tick
                log.warning("could not follow the library registry", exc_info=True)
            self._stop.wait(self.poll_s)

    def sync(self) -> None:
        """Open engines for registered libraries that have none; close those no longer registered."""
        libs = _active(registry.load())
        with self._lock:
            gone = [n for n in self._engines if n not in libs]
            closing = [self._engines.pop(n) for n in gone]
        for name, engine in zip(gone, closing):
            log.info("library %s was removed; closing its engine", name)
            self._close(engine)
        if self.background:
            for name, entry in libs.items():
                try:
                    self._get(name, entry)
                except Exception:
                    log.warning("could not open library %s", name, exc_info=True)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with self._lock:
            engines, self._engines = list(self._engines.values()), {}
        for engine in engines:
            self._close(engine)

    @staticmethod
    def _close(engine: EngineHandle) -> None:
        try:
            engine.close()
        except Exception:
            log.exception("closing a library engine failed")

    def __enter__(self) -> LibraryPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- access ------------------------------------------------------------------------------
    def _get(self, name: str, entry: dict) -> EngineHandle:
        with self._lock:
            engine = self._engines.get(name)
            if engine is None:
                engine = open_library_engine(name, entry, background=self.background, settings=self.settings)
                self._engines[name] = engine
            return engine

    def engine(self, name: str) -> EngineHandle:
        """The engine of one registered library (opened now if this pool has none yet)."""
        registry.validate_name(name)
        libs = _active(registry.load())
        if name not in libs:
            raise LibraryError(f"unknown library {name!r} (registered: {', '.join(sorted(libs)) or 'none yet'})")
        return self._get(name, libs[name])

    def engines(self, names: list[str] | None = None) -> dict[str, EngineHandle]:
        """name → engine for these libraries (all registered ones when ``names`` is None)."""
        libs = _active(registry.load())
        wanted = sorted(libs) if names is None else list(dict.fromkeys(names))
        unknown = [n for n in wanted if n not in libs]
        if unknown:
            raise LibraryError(f"unknown library name(s) {unknown} (registered: {', '.join(sorted(libs)) or 'none yet'})")
        return {n: self._get(n, libs[n]) for n in wanted}

    def roles(self) -> dict[str, str]:
        """name → owner | attached | direct, for the libraries this pool has open."""
        with self._lock:
            return {n: e.role for n, e in self._engines.items()}
