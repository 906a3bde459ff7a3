"""Memory rules (``m``): the global and project rules agents get at session start; add, edit, remove.

Everything goes through ``probe_core.memory.rules.RuleStore``: it validates (label format and
length, duplicates, empty content) before it writes, and its ``RuleError`` is shown in the form.
The store is local SQLite, but its calls still run in worker threads (a busy store waits).
"""
from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Label, Static

from ..format import clip
from ..widgets.topbar import TopBar
from .confirm import ConfirmScreen
from .form import Field, FormScreen

SCOPES = ("project", "global")
FIXED_COLUMNS = 54  # scope, label, title, tags and the cell padding; the content preview gets the rest


class MemoryScreen(Screen):
    """Lists ``RuleStore.list()`` (global first, then the project's, each by creation)."""

    BINDINGS = [
        Binding("a", "add", "Add"),
        Binding("e", "edit", "Edit"),
        Binding("delete", "remove", "Remove", key_display="del"),  # not `d`: the doctor's key everywhere
        Binding("r", "reload", "Refresh", show=False,  # in help; the footer keeps 80 columns for quit
                tooltip="read the rules again (another process may have changed them)"),
        Binding("g", "only('global')", "Global", tooltip="global rules only (again: all)"),
        Binding("p", "only('project')", "Project", tooltip="project rules only (again: all)"),
    ]

    def __init__(self):
        super().__init__()
        self.rules: list = []  # every rule, as RuleStore.list() returned them
        self.shown: list = []  # the rules in the table (after the scope filter)
        self.scope_filter: str | None = None
        self.loaded = 0  # how many times the list came back (tests wait on it)
        self.select_next: tuple[str, str] | None = None  # (scope, label) to put the cursor on once loaded

    def compose(self) -> ComposeResult:
        yield TopBar("memory", self.BINDINGS)
        yield Label("reading the rules…", id="memory-summary")
        yield DataTable(id="rules", cursor_type="row", zebra_stripes=True)
        yield Static("", id="rule-detail", classes="panel")
        yield Footer()

    def on_screen_resume(self) -> None:
        self.action_reload()  # each time the screen is shown: another process may have changed the rules

    def store(self):
        from probe_core.memory.rules import RuleStore

        return RuleStore(self.app.root)

    # -- loading -----------------------------------------------------------------------------
    def action_reload(self) -> None:
        self.load()

    @work(thread=True, exclusive=True, group="memory")
    def load(self) -> None:
        from probe_core.errors import ProbeError

        try:
            rules = self.store().list()
        except ProbeError as exc:
            self.app.call_from_thread(self._show_error, str(exc))
            return
        self.app.call_from_thread(self.show_rules, rules)

    def _show_error(self, message: str) -> None:
        self.query_one("#memory-summary", Label).update(Text(message, style="red"))

    def show_rules(self, rules: list) -> None:
        current = self.selected()
        self.rules = rules
        self.shown = [r for r in rules if self.scope_filter in (None, r.scope)]
        table = self.query_one("#rules", DataTable)
        table.clear(columns=True)
        preview = max(self.size.width - FIXED_COLUMNS, 16)
        table.add_column("scope", width=7)
        table.add_column("label", width=15)
        table.add_column("title", width=12)
        table.add_column("tags", width=10)
        table.add_column("content", width=preview)
        for r in self.shown:
            scope = Text(r.scope, style="bold magenta" if r.scope == "global" else "bold cyan")
            table.add_row(scope, Text(r.label, style="bold"), Text(clip(r.title, 12)),
                          Text(clip(", ".join(r.tags), 10), style="cyan"), Text(clip(r.content, preview)),
                          key=f"{r.scope}:{r.label}")
        want, self.select_next = self.select_next or ((current.scope, current.label) if current else None), None
        index = next((i for i, r in enumerate(self.shown) if want and (r.scope, r.label) == want), 0)
        if self.shown:
            table.move_cursor(row=index)
        self._show_summary()
        self._show_detail()
        self.loaded += 1

    def _show_summary(self) -> None:
        n_global = sum(1 for r in self.rules if r.scope == "global")
        n_project = len(self.rules) - n_global
        showing = {None: "all", "global": "global only", "project": "project only"}[self.scope_filter]
        text = f"[b]{n_global}[/] global · [b]{n_project}[/] project · showing {showing}"
        if not self.rules:
            text = "no rules yet: [b]a[/] adds one (agents read them at session start)"
        self.query_one("#memory-summary", Label).update(text)

    def on_resize(self) -> None:
        if self.loaded:
            self.show_rules(self.rules)

    # -- the highlighted rule ----------------------------------------------------------------
    def selected(self):
        """The rule under the cursor, or ``None`` when the table is empty."""
        table = self.query_one("#rules", DataTable)
        if not self.shown or table.cursor_row >= len(self.shown):
            return None
        return self.shown[table.cursor_row]

    @on(DataTable.RowHighlighted, "#rules")
    def _show_detail(self) -> None:
        rule = self.selected()
        detail = self.query_one("#rule-detail", Static)
        if rule is None:
            detail.update(Text("a add · g/p global/project only · r refresh", style="dim"))
            return
        text = Text()
        text.append(f"{rule.label}", style="bold")
        text.append(f" ({rule.scope})", style="dim")
        if rule.title:
            text.append(f" {rule.title}")
        if rule.tags:
            text.append(f" [{', '.join(rule.tags)}]", style="cyan")
        text.append("\n" + rule.content)
        detail.update(text)

    @on(DataTable.RowSelected, "#rules")
    def _row_selected(self) -> None:
        self.action_edit()

    # -- actions -----------------------------------------------------------------------------
    def action_only(self, scope: str) -> None:
        self.scope_filter = None if self.scope_filter == scope else scope
        self.show_rules(self.rules)

    def action_add(self) -> None:
        default_scope = self.scope_filter or "project"
        fields = [
            Field("label", "label", placeholder="lowercase-hyphenated, ≤ 15 chars"),
            Field("scope", "scope", default_scope, kind="select", options=SCOPES),
            Field("title", "title", placeholder="optional"),
            Field("tags", "tags", placeholder="optional, comma-separated"),
            Field("content", "content", kind="text"),
        ]

        def submit(v: dict[str, str]):
            return self.store().add(v["label"], v["content"], v["scope"], title=v["title"] or None, tags=v["tags"])

        self.app.push_screen(FormScreen("Add a memory rule", fields, submit), self._saved("added"))

    def action_edit(self) -> None:
        rule = self.selected()
        if rule is None:
            self.notify("no rule to edit: a adds one", severity="warning")
            return
        fields = [
            Field("label", "label", rule.label, fixed=True),
            Field("scope", "scope", rule.scope, fixed=True),
            Field("title", "title", rule.title or "", placeholder="optional"),
            Field("tags", "tags", ", ".join(rule.tags), placeholder="optional, comma-separated"),
            Field("content", "content", rule.content, kind="text"),
        ]

        def submit(v: dict[str, str]):
            return self.store().update(rule.label, rule.scope, content=v["content"], title=v["title"], tags=v["tags"])

        self.app.push_screen(FormScreen(f"Edit the {rule.scope} rule {rule.label}", fields, submit),
                             self._saved("updated"))

    def _saved(self, verb: str):
        def done(rule) -> None:
            if rule is None:
                return  # cancelled
            self.notify(f"{verb} {rule.scope} rule {rule.label!r}", title="Memory")
            self.select_next = (rule.scope, rule.label)
            self.load()
        return done

    def action_remove(self) -> None:
        rule = self.selected()
        if rule is None:
            self.notify("no rule to remove", severity="warning")
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.remove(rule.label, rule.scope)

        self.app.push_screen(ConfirmScreen(f"Remove the {rule.scope} rule {rule.label!r}?\n\n{clip(rule.content, 60)}"),
                             answered)

    @work(thread=True, group="memory-write")
    def remove(self, label: str, scope: str) -> None:
        from probe_core.errors import ProbeError

        try:
            self.store().remove(label, scope)
        except ProbeError as exc:
            self.app.call_from_thread(self.notify, str(exc), title="Memory", severity="error")
        else:
            self.app.call_from_thread(self.notify, f"removed {scope} rule {label!r}", title="Memory")
        self.app.call_from_thread(self.load)
