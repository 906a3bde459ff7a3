"""The process model: one owner per workspace, any number of attached processes.

Why: Claude Code, Cursor and Codex each spawn their own ``probe mcp`` for the same repository,
but the embedded store (Qdrant Edge) admits one owning process per shard (a second open fails
with ``WouldBlock``), and two indexers over one manifest would race. So exactly one process per
workspace opens the index, indexes and watches; the others forward their tool calls to it.

How:

* **Election** (``lock.py``). Every ``probe mcp`` tries a non-blocking exclusive ``flock`` on
  ``.probe/engine.lock``. The winner is the *owner*. The kernel drops the lock when its holder
  dies, SIGKILL included, so there is never a stale lock to clean up.
* **Owner** (``service.OwnerEngine``). Opens the ``Workspace``; a worker thread runs the first
  scan lexical-first (``index_workspace(dense=False)``), then fills dense vectors in small
  batches (``fill_dense(should_stop=...)``) that yield whenever a search runs or a watcher batch
  waits; the watcher (``indexing/watcher.py``) turns file events into incremental scans. The
  owner serves a local RPC (``rpc.py``: newline-delimited JSON over a Unix domain socket at
  ``.probe/engine.sock``, or a short path under ``$XDG_RUNTIME_DIR`` / ``/tmp/probe-<uid>`` when
  that path is too long for ``AF_UNIX``; the path actually bound is published in
  ``.probe/engine.json``) exposing the ``Engine`` protocol's verbs and no other method
  (``surface.py``); what the worker does next is ``indexing/scheduler.py``.
* **Attached** (``client.AttachedEngine``). Forwards each call to the owner. Its handle polls
  the lock (every 0.5 s) and a call that finds no owner tries it too: when the owner is gone,
  the first attached process to get the lock promotes itself to owner (``handle.EngineHandle``),
  reopens the workspace (the indexer's crash recovery reconciles a half-written index) and the
  others re-attach to it. Lock errors never reach an agent: a call waits for an owner (up to
  ``PROBE_ATTACH_TIMEOUT_S``) or becomes one.
* **CLI** (``probe search`` / ``probe status`` / code intelligence). One RPC to the owner when one
  answers (importing only ``client`` and ``rpc``); otherwise the same handle without background
  work: it answers in-process (``direct.DirectEngine``, holding the lock meanwhile), then starts the
  background owner for the next calls.
* **Background owner** (``daemon.py``). An ``OwnerEngine`` in a detached process without MCP:
  ``probe index --background`` leaves the dense phase to it; it takes the lock itself, exits when
  idle or on ``probe stop``, and a ``probe mcp`` attaches to it like to any owner.

Every face sees the same ``Engine`` (``protocol.py``) and the same answers (``answers.py``), so
the MCP tools, the CLI and an attached process return identical results.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .handle import EngineHandle
    from .protocol import Engine
    from .settings import EngineSettings

# Lazy, like ``probe_core``: a CLI call answered by a running owner imports only ``client`` and
# ``rpc`` (the settings pull in the watcher and pathspec, ~0.15 s of imports it does not need).
_EXPORTS = {"Engine": "protocol", "EngineHandle": "handle", "EngineSettings": "settings"}


def open_engine(root, *, background: bool = True, settings: EngineSettings | None = None) -> EngineHandle:
    """The ``Engine`` for ``root``: owner if nobody else is, attached to the owner otherwise."""
    from .handle import EngineHandle
    from .malloc_arenas import limit_malloc_arenas

    limit_malloc_arenas()  # this process may own the index: its many threads, two arenas

    return EngineHandle(root, settings, background=background)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'probe_core.engine' has no attribute {name!r}")


__all__ = ["Engine", "EngineHandle", "EngineSettings", "open_engine"]
