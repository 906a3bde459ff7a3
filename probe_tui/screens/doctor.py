"""The doctor (``d``): every hardware and stack check, green/yellow/red, with its one-line fix."""
from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Label, Static

from ..format import STATUS_ICON, mask_text
from ..widgets.topbar import TopBar

STYLE = {"ok": "green", "warn": "yellow", "fail": "red", "skip": "dim"}


class DoctorScreen(Screen):
    """Runs ``probe_core.doctor.run_doctor`` in a worker; ``r`` runs it again."""

    BINDINGS = [Binding("r", "rerun", "Re-run", tooltip="run every check again")]

    def __init__(self):
        super().__init__()
        self.checks: list = []

    def compose(self) -> ComposeResult:
        yield TopBar("doctor", self.BINDINGS)
        yield Label("running checks…", id="doctor-summary")
        yield VerticalScroll(id="checks")
        yield Footer()

    def on_mount(self) -> None:
        self.action_rerun()

    def action_rerun(self) -> None:
        self.query_one("#doctor-summary", Label).update("running checks…")
        self.run_checks()

    @work(thread=True, exclusive=True, group="doctor")
    def run_checks(self) -> None:
        from probe_core.config import WorkspaceConfig, load_config
        from probe_core.doctor import run_doctor
        from probe_core.errors import ProbeError

        root = self.app.root
        try:
            cfg = load_config(root)
            cfg = cfg.with_env() if cfg is not None else WorkspaceConfig().with_env()
            checks = run_doctor(cfg, root=root)
        except ProbeError as exc:
            self.app.call_from_thread(self.query_one("#doctor-summary", Label).update, f"[red]{exc}[/]")
            return
        self.app.call_from_thread(self.show_checks, checks)

    def show_checks(self, checks: list) -> None:
        self.checks = checks
        masked = getattr(self.app, "masked", False)
        root = str(self.app.root)
        box = self.query_one("#checks", VerticalScroll)
        box.remove_children()
        rows = []
        for c in checks:
            line = Text()
            line.append(f"{STATUS_ICON[c.status]} ", style=f"bold {STYLE[c.status]}")
            line.append(f"{c.name:<12}", style="bold")
            line.append(mask_text(c.detail, masked, root), style=STYLE[c.status] if c.status != "ok" else "")
            if c.fix:
                line.append("\n   fix: ", style="bold")
                line.append(mask_text(c.fix, masked, root))
            rows.append(Static(line, classes=f"check check-{c.status}"))
        box.mount_all(rows)
        counts = {s: sum(1 for c in checks if c.status == s) for s in STYLE}
        self.query_one("#doctor-summary", Label).update(
            f"[green]{counts['ok']} ok[/] · [yellow]{counts['warn']} warn[/] · [red]{counts['fail']} fail[/]"
            f" · [dim]{counts['skip']} skipped[/]   (r re-runs)")
