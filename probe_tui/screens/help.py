"""The help screen (``?``): every key, under the screen where it works.

The key lists are read from the bindings themselves (the app's, each screen's, the widgets'), so
help cannot list a key where it does nothing (it used to list the dashboard's rescan and the
doctor's re-run under "Everywhere"); the prose around them says what each screen shows.
"""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import Static

from ..widgets.topbar import SCREENS

# what each screen is for, and keys that belong to its widgets rather than to the screen
ABOUT = {
    "dashboard": ("live indexing, watcher, backend, errors", []),
    "search": ("type to search; results, preview, filters",
               [("enter", "from the query: to the results; on a result: its range"),
                ("↑ ↓ j k", "move through the results (the preview follows)")]),
    "doctor": ("hardware and stack checks, each with a fix", []),
    "setup": ("hardware, presets, the stack, the first index",
              [("↑ ↓", "choose a preset (a applies it)")]),
    "memory": ("rules agents follow, global and per project", [("enter", "edit the highlighted rule")]),
    "libraries": ("reference docs searched beside the code", []),
}


def _key(b: Binding) -> str:
    keys = [k.strip() for k in b.key.split(",")]
    names = {"question_mark": "?", "slash": "/", "escape": "esc", "full_stop": "."}
    return b.key_display or " ".join(names.get(k, k.replace("ctrl+", "^")) for k in keys)


def _lines(rows: list[tuple[str, str]]) -> list[str]:
    """``key  what`` lines, the keys padded to one width so the descriptions line up."""
    width = max((len(k) for k, _ in rows), default=0)
    return [f"  [b]{escape(k)}[/]{' ' * (width - len(k))}  {d}" for k, d in rows]


def _rows(bindings) -> list[tuple[str, str]]:
    out = []
    for b in bindings:
        b = b if isinstance(b, Binding) else Binding(*b)
        if b.description:  # the tooltip, where there is one, says more than the footer's word
            out.append((_key(b), b.tooltip or b.description))
    return out


def help_text(app) -> str:
    """The help, from ``app``'s bindings and its screens' (``app.MODES``)."""
    lines = ["[b]Probe[/] — local code search for agents  [dim](esc closes)[/]", "",
             "[b]Screens[/] (the top line; click or press the key)"]
    lines += _lines([(shown, f"{label:<10} {ABOUT[mode][0]}") for mode, _, shown, label in SCREENS])
    switches = {key for _, key, _, _ in SCREENS}
    everywhere = [b for b in app.BINDINGS if b.key not in switches]
    lines += ["", "[b]Everywhere[/] (unless a text box has the focus: esc first)"]
    lines += _lines(_rows(everywhere) + [("^p", "command palette")])
    for mode, _, _, label in SCREENS:
        screen = app.MODES[mode]
        rows = _rows(getattr(screen, "BINDINGS", [])) + ABOUT[mode][1]
        if rows:
            lines += ["", f"[b]{label}[/]", *_lines(rows)]
    return "\n".join(lines)


class HelpScreen(ModalScreen):
    """A modal over the current screen."""

    BINDINGS = [Binding("escape,question_mark,q", "app.pop_screen", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Static(help_text(self.app))
