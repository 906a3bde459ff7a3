"""The Probe terminal app (a shell for now: the screens come with their issue)."""
from __future__ import annotations

from pathlib import Path

from textual.app import App, ComposeResult
from textual.widgets import Footer, Header, Static


class ProbeApp(App):
    TITLE = "Probe"
    BINDINGS = [("q", "quit", "Quit")]

    def __init__(self, root: Path):
        super().__init__()
        self.root = root

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(f"Workspace: {self.root}\n\nUse `probe index` and `probe search` for now.", id="body")
        yield Footer()


def run_app(root: Path) -> int:
    ProbeApp(root).run()
    return 0
