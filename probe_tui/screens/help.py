"""The help screen (``?``): every key, what each screen shows."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

HELP = """\
[b]Probe[/] — local code search for coding agents     [dim]esc or ? closes[/]

[b]Screens[/]
  [b]i[/]  dashboard   live indexing, watcher, backend, errors
  [b]/[/]  search      query, filters, results, preview
  [b]d[/]  doctor      hardware and stack checks with fixes
  [b]s[/]  setup       hardware, preset, stack, first index
  [b]m[/]  memory      rules for agents ([b]a[/] add · [b]e[/] edit · [b]d[/] remove)
  [b]l[/]  libraries   reference docs ([b]a[/] add · [b]x[/] rescan · [b]d[/] remove)

[b]Search[/]
  type to search · [b]enter[/] jump to results · [b]↑↓ j k[/] move
  [b]enter[/] on a result opens its whole range · [b]esc[/] back
  [b]m[/] mode auto → fast → quality · [b]e[/] rerank instruction

[b]Everywhere[/]
  [b]ctrl+p[/] command palette · [b]t[/] light/dark · [b]x[/] rescan
  [b]r[/] re-run doctor · [b]?[/] this help · [b]q[/] quit"""


class HelpScreen(ModalScreen):
    """A modal over the current screen."""

    BINDINGS = [Binding("escape,question_mark,q", "app.pop_screen", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Static(HELP)
