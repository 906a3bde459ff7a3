"""The Probe terminal app: dashboard, search, doctor, setup, memory rules and libraries over one workspace.

``probe`` with no arguments runs :func:`run_app`. Every slow call (opening the engine, status,
search, doctor, hardware, the stack, the rule and library stores) runs in a worker thread that
posts a message back; the UI thread only renders.
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from textual import on, work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.reactive import reactive
from textual.screen import Screen

from probe_core import environment

from .messages import EngineOpened, StatusUpdated
from .screens.dashboard import DashboardScreen
from .screens.doctor import DoctorScreen
from .screens.help import HelpScreen
from .screens.libraries import LibrariesScreen
from .screens.memory import MemoryScreen
from .screens.search import SearchScreen
from .screens.setup import SetupScreen
from .session import EngineSession

STATUS_INTERVAL_S = 0.5
THEMES = ("textual-dark", "textual-light")


class ProbeApp(App):
    """Probe: set up, watch and search one repository's index."""

    TITLE = "Probe"
    CSS_PATH = "probe.tcss"
    MODES = {
        "dashboard": DashboardScreen,
        "search": SearchScreen,
        "doctor": DoctorScreen,
        "setup": SetupScreen,
        "memory": MemoryScreen,
        "libraries": LibrariesScreen,
    }
    # the screen switches live in every screen's top bar (widgets/topbar.py), not the footer, which
    # keeps the screen's own keys, help and quit and so fits 80 columns; help lists them all
    BINDINGS = [
        Binding("i", "switch_mode('dashboard')", "Index", show=False),
        Binding("slash", "switch_mode('search')", "Search", key_display="/", show=False),
        Binding("d", "switch_mode('doctor')", "Doctor", show=False),
        Binding("s", "switch_mode('setup')", "Setup", show=False),
        Binding("m", "switch_mode('memory')", "Memory", show=False),
        Binding("l", "switch_mode('libraries')", "Libraries", show=False),
        Binding("t", "toggle_theme", "Light/dark theme", show=False),
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("q", "quit", "Quit"),
    ]

    status: reactive[dict] = reactive(dict, always_update=True)
    status_error: reactive[str | None] = reactive(None)
    engine_role: reactive[str | None] = reactive(None)

    def __init__(self, root: Path, *, masked: bool | None = None, engine_settings=None, start_engine: bool = True):
        super().__init__()
        self.root = Path(root).resolve()
        self.session = EngineSession(self.root, engine_settings)
        self.masked = masked if masked is not None else environment.get("PROBE_TUI_MASK") == "1"
        self.start_engine = start_engine
        self.sub_title = self.root.name
        self.theme = THEMES[0]

    # -- lifecycle ---------------------------------------------------------------------------
    def on_mount(self) -> None:
        if self.session.configured:
            self.switch_mode("dashboard")
            if self.start_engine:
                self.open_engine()
        else:
            self.switch_mode("setup")  # first run: no .probe/config.json yet
        self.set_interval(STATUS_INTERVAL_S, self.refresh_status)

    def on_unmount(self) -> None:
        self.session.close()

    @work(thread=True, exclusive=True, group="engine")
    def open_engine(self, reopen: bool = False) -> None:
        """Own the workspace (index + watch) or attach to the process that does."""
        from probe_core.errors import ProbeError

        try:
            role = self.session.reopen() if reopen else self.session.open()
        except ProbeError as exc:
            self.post_message(EngineOpened(None, str(exc)))
            return
        self.post_message(EngineOpened(role))
        self.refresh_status()

    @work(thread=True, exclusive=True, group="status")
    def refresh_status(self) -> None:
        if not self.session.is_open:
            return
        from probe_core.errors import ProbeError

        try:
            self.post_message(StatusUpdated(self.session.status()))
        except ProbeError as exc:
            self.post_message(StatusUpdated(None, str(exc)))

    @on(EngineOpened)
    def _engine_opened(self, event: EngineOpened) -> None:
        self.engine_role = event.role
        if event.error:
            self.status_error = event.error
            self.notify(event.error, title="Engine", severity="error", timeout=10)

    @on(StatusUpdated)
    def _status_updated(self, event: StatusUpdated) -> None:
        self.status_error = event.error
        if event.status is not None:
            self.status = event.status

    # -- actions -----------------------------------------------------------------------------
    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_toggle_theme(self) -> None:
        self.theme = THEMES[1] if self.theme == THEMES[0] else THEMES[0]

    def action_rescan(self) -> None:
        self.rescan()

    @work(thread=True, group="rescan")
    def rescan(self) -> None:
        ok = self.session.rescan()
        msg = "full rescan requested" if ok else "another Probe process owns this workspace; it rescans on its own"
        self.call_from_thread(self.notify, msg, title="Index")

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Probe: dashboard", "Live indexing, watcher and backend state (i)",
                            lambda: self.switch_mode("dashboard"))
        yield SystemCommand("Probe: search", "Hybrid search with a preview (/)", lambda: self.switch_mode("search"))
        yield SystemCommand("Probe: doctor", "Hardware and stack checks with fixes (d)",
                            lambda: self.switch_mode("doctor"))
        yield SystemCommand("Probe: setup", "Hardware, preset, stack (s)", lambda: self.switch_mode("setup"))
        yield SystemCommand("Probe: memory rules", "The rules agents get at session start: add, edit, remove (m)",
                            lambda: self.switch_mode("memory"))
        yield SystemCommand("Probe: libraries", "Reference docs indexed beside the project: add, remove (l)",
                            lambda: self.switch_mode("libraries"))
        yield SystemCommand("Probe: rescan now", "Ask the indexer for a full incremental scan", self.action_rescan)
        yield SystemCommand("Probe: toggle light/dark", "Switch the theme (t)", self.action_toggle_theme)
        yield SystemCommand("Probe: help", "Every key binding (?)", self.action_help)


def run_app(root: Path) -> int:
    """Entry point of ``probe`` with no arguments."""
    ProbeApp(root).run()
    return 0
