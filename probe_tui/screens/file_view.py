"""The full range of one result (enter on the search screen), read from disk through the engine."""
from __future__ import annotations

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Static

from ..widgets.preview import Preview
from ..widgets.topbar import TopBar


class FileViewScreen(Screen):
    """Every line of ``path`` from ``start`` to ``end``, syntax-highlighted; escape goes back."""

    BINDINGS = [Binding("escape,q", "app.pop_screen", "Back"),
                Binding("j", "scroll('down')", "Down", show=False),
                Binding("k", "scroll('up')", "Up", show=False)]

    def __init__(self, path: str, start: int, end: int, language: str | None):
        super().__init__()
        self.path, self.start, self.end, self.language = path, start, end, language

    def compose(self) -> ComposeResult:
        yield TopBar("search", self.BINDINGS)
        yield Static(f"[b]{self.path}[/]  lines {self.start}-{self.end}", id="file-title")
        yield Preview(id="file-body")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(Preview).focus()
        self.load()

    def action_scroll(self, direction: str) -> None:
        body = self.query_one(Preview)
        body.scroll_down() if direction == "down" else body.scroll_up()

    @work(thread=True, exclusive=True)
    def load(self) -> None:
        from probe_core.errors import ProbeError

        try:
            ans = self.app.session.open_file(self.path, self.start, self.end)
        except ProbeError as exc:
            self.app.call_from_thread(self.query_one(Preview).show_message, str(exc))
            return
        lines = ans["lines"]
        # pad so Syntax numbers the lines as in the file
        text = "\n" * (ans["start_line"] - 1) + "\n".join(lines)
        note = f"  [yellow]{ans['message']}[/]" if ans.get("message") else ""
        state = ans.get("index_state")
        title = (f"[b]{ans['path']}[/]  lines {ans['start_line']}-{ans['end_line']} of {ans['total_lines']}"
                 f"  [dim]index: {state}[/]{note}")

        def show() -> None:
            self.query_one("#file-title", Static).update(title)
            preview = self.query_one(Preview)
            preview.show(text, ans["path"], ans["start_line"], ans["end_line"], self.language,
                         theme_dark=self.app.current_theme.dark, context=0, mark=False)
        self.app.call_from_thread(show)
