"""The search preview: a file read from disk, syntax-highlighted, with the hit's lines marked."""
from __future__ import annotations

from rich.syntax import Syntax
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

CONTEXT_LINES = 6  # lines shown above and below the hit
LEXERS = {"tsx": "tsx", "shell": "bash", "csharp": "csharp", "text": "text"}


class Preview(VerticalScroll):
    """Shows ``path`` lines around ``start..end``; the hit lines get the highlight bar."""

    can_focus = True

    def compose(self):
        yield Static(Text("No result selected", style="dim"), id="preview-body")

    def show_message(self, message: str) -> None:
        self.query_one("#preview-body", Static).update(Text(message, style="dim"))

    def show(self, text: str, path: str, start: int, end: int, language: str | None, *, theme_dark: bool,
             context: int = CONTEXT_LINES, mark: bool = True) -> None:
        lines = text.splitlines()
        first = max(1, start - context)
        last = min(len(lines), end + context)
        lexer = LEXERS.get(language or "", language) or Syntax.guess_lexer(path, text)
        syntax = Syntax(text, lexer, line_numbers=True, line_range=(first, last),
                        highlight_lines=set(range(start, end + 1)) if mark else None, word_wrap=False,
                        theme="monokai" if theme_dark else "default", indent_guides=False,
                        background_color="default")
        self.query_one("#preview-body", Static).update(syntax)
        self.scroll_home(animate=False)
