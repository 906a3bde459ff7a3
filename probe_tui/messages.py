"""Messages the workers post back to the UI thread."""
from __future__ import annotations

from textual.message import Message


class StatusUpdated(Message):
    """A fresh ``index_status`` reading (or the error that prevented one)."""

    def __init__(self, status: dict | None, error: str | None = None):
        super().__init__()
        self.status = status
        self.error = error


class EngineOpened(Message):
    """The engine is open (``role`` owner or attached), or failed to open (``error``)."""

    def __init__(self, role: str | None, error: str | None = None):
        super().__init__()
        self.role = role
        self.error = error
