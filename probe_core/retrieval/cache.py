"""A small LRU for search responses, keyed so that any index change misses."""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any


class LruCache:
    def __init__(self, capacity: int = 256):
        self.capacity = capacity
        self._data: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                return self._data[key]
        return None

    def put(self, key, value) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.capacity:
                self._data.popitem(last=False)
