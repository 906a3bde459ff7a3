"""One helper object per open ``Workspace`` (a text cache, a graph connection), made on first use
and dropped with the workspace: weakly keyed, so a closed workspace never keeps it alive.

Keyed by any weakly referable object: this module sits below ``workspace``, which calls
``forget_workspace`` when it closes."""
from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")
Workspace = Any  # the ``workspace.Workspace`` a helper belongs to (importing it would close a cycle)


_ALL: weakref.WeakSet = weakref.WeakSet()  # every PerWorkspace, for ``forget_workspace``


def forget_workspace(ws: Workspace) -> None:
    """Drop (and close) every helper made for ``ws``: its index files were replaced (a rebuild), so
    a connection or cache made for the old ones must not be used again."""
    for per in list(_ALL):
        per.drop(ws)


class PerWorkspace(Generic[T]):
    def __init__(self, make: Callable[[Workspace], T], close: Callable[[T], None] | None = None):
        """``make`` builds the object for a workspace; ``close`` (optional) runs when the
        workspace object is collected."""
        self._make = make
        self._close = close
        self._items: weakref.WeakKeyDictionary[Workspace, T] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        _ALL.add(self)

    def get(self, ws: Workspace) -> T:
        with self._lock:
            item = self._items.get(ws)
            if item is None:
                item = self._items[ws] = self._make(ws)
                if self._close is not None:
                    weakref.finalize(ws, self._close, item)
            return item

    def drop(self, ws: Workspace) -> None:
        with self._lock:
            item = self._items.pop(ws, None)
        if item is not None and self._close is not None:
            try:
                self._close(item)
            except Exception:  # noqa: BLE001 - an old connection to deleted files: nothing to keep
                pass
