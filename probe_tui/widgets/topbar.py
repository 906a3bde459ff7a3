"""The top line of every screen: the app and the repository, and the screens with their keys.

The footer had to carry both the screen's own keys and the six screen switches, and cut off the
end (quit, memory, libraries) at 80 columns. So the screens move up here, one line that fits 80
columns (the repository name gives way first), the current screen highlighted and each entry
clickable; the footer keeps the screen's keys, help and quit. A screen switch whose key the
current screen uses for something else would be shown without its key (none does now: a test keeps it so).
"""
from __future__ import annotations

from textual.content import Content
from textual.markup import escape
from textual.widget import Widget

# (mode, key as typed, key as shown, label): the order of the app's screens
SCREENS = (
    ("dashboard", "i", "i", "Index"),
    ("search", "slash", "/", "Search"),
    ("doctor", "d", "d", "Doctor"),
    ("setup", "s", "s", "Setup"),
    ("memory", "m", "m", "Memory"),
    ("libraries", "l", "l", "Libraries"),
)
MIN_NAME = 6  # characters of the repository name kept before it is cut with "…"


class TopBar(Widget):
    """``Probe · repo`` on the left, ``i Index  / Search  …`` on the right (see the module doc)."""

    DEFAULT_CSS = """
    TopBar {
        dock: top;
        height: 1;
        background: $panel;
        color: $foreground;
        link-style: none;
        link-color: $foreground;
        link-background-hover: $accent 30%;
    }
    """

    def __init__(self, mode: str, screen_bindings=()):
        """``mode``: the screen to highlight; ``screen_bindings``: the screen's own ``BINDINGS``,
        whose keys then switch screens no longer (their entries lose the key hint)."""
        super().__init__()
        self.mode = mode
        keys = {k.strip() for b in screen_bindings for k in b.key.split(",")}
        self.shadowed = frozenset(key for m, key, _, _ in SCREENS if key in keys and m != mode)

    def nav(self) -> Content:
        parts = []
        for mode, key, shown, label in SCREENS:
            hint = "" if key in self.shadowed else (f"[b]{escape(shown)}[/b] " if mode == self.mode
                                                    else f"[b $accent]{escape(shown)}[/] ")
            entry = f"[@click=app.switch_mode('{mode}')] {hint}{label} [/]"
            parts.append(f"[reverse]{entry}[/reverse]" if mode == self.mode else entry)
        return Content.from_markup(" ".join(parts))

    def render(self) -> Content:
        nav = self.nav()
        root = getattr(self.app, "root", None)
        name = root.name if root is not None else ""
        room = self.size.width - nav.cell_length - len(" Probe · ") - 1
        if len(name) > max(room, MIN_NAME):
            name = name[:max(room, MIN_NAME) - 1] + "…"
        left = Content.from_markup("[b] Probe[/b][dim] · $name[/dim]", name=name) if name \
            else Content.from_markup("[b] Probe[/b]")
        gap = max(1, self.size.width - left.cell_length - nav.cell_length)
        return Content.assemble(left, " " * gap, nav)
