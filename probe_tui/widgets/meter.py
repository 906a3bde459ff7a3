"""A labelled progress bar with a count on the right: one line of the dashboard."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label, ProgressBar


class Meter(Horizontal):
    """``label  [██████░░░]  42%  done/total  extra``."""

    def __init__(self, label: str, *, id: str | None = None):
        super().__init__(id=id, classes="meter")
        self._label = label

    def compose(self) -> ComposeResult:
        yield Label(self._label, classes="meter-label")
        yield ProgressBar(total=None, show_eta=False, show_percentage=True, classes="meter-bar")
        yield Label("", classes="meter-count")

    def set(self, done: int, total: int, extra: str = "") -> None:
        bar = self.query_one(ProgressBar)
        if total > 0:
            bar.update(total=total, progress=min(done, total))
        else:
            bar.update(total=None)
        count = f"{done}/{total}" if total else f"{done}"
        self.query_one(".meter-count", Label).update(f"{count} {extra}".rstrip())
