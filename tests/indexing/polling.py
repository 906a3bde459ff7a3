"""A test helper: a thread that keeps trying something while the test's block runs."""
from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable


@contextlib.contextmanager
def polling(act: Callable[[], bool]):
    """For the length of the block, a thread calls ``act`` every millisecond until it returns True
    (it did what it waited for); the thread is stopped and joined when the block ends."""
    done = threading.Event()

    def loop():
        while not done.is_set() and not act():
            done.wait(0.001)
    thread = threading.Thread(target=loop)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
