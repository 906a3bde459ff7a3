"""Setup (``s``, and the first run): hardware, the recommended preset and why, the stack, the first index.

Choosing ``embedded`` writes ``.probe/config.json`` and starts indexing at once (one keypress:
``e``). A stack preset plans the compose stack for this GPU, shows the TEI image, runs
``probe up`` (``StackController.up``) and, once healthy, points the workspace at it; without a
Docker engine the controller's error says why, and the screen shows it.
"""
from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Footer, Label, RadioButton, RadioSet, RichLog, Static

from probe_core.config import PRESETS

from ..format import mask_text
from ..widgets.topbar import TopBar


class PresetChoice(RadioSet):
    """The presets: ↑ ↓ choose at once (a plain RadioSet only moves a highlight until enter, so `a`
    applied a preset other than the one the cursor was on)."""

    def action_next_button(self) -> None:
        super().action_next_button()
        self.action_toggle_button()

    def action_previous_button(self) -> None:
        super().action_previous_button()
        self.action_toggle_button()


class SetupScreen(Screen):
    """Pick a preset for this workspace and bring its backends up."""

    BINDINGS = [
        Binding("e", "use_embedded", "Embedded now", tooltip="set up the embedded default (no Docker) now"),
        Binding("a", "apply", "Apply choice", tooltip="apply the chosen preset"),
    ]

    def __init__(self):
        super().__init__()
        self.recommendation = None
        self.reading = None
        self.busy = False

    def compose(self) -> ComposeResult:
        yield TopBar("setup", self.BINDINGS)
        with VerticalScroll(id="setup"):
            yield Static("reading the hardware…", id="hardware", classes="panel")
            with Horizontal(id="setup-choice"):
                with PresetChoice(id="presets"):
                    for name, spec in PRESETS.items():
                        yield RadioButton(f"{name:<9} {spec.description}", name=name)
                with Vertical(id="setup-actions"):
                    yield Button("Apply (a)", id="apply", variant="primary")
                    yield Button("Embedded now (e)", id="embedded")
            yield Label("", id="setup-state")
            yield RichLog(id="setup-log", wrap=True, markup=True, max_lines=200)
        yield Footer()

    def on_mount(self) -> None:
        configured = self.app.session.configured
        self.query_one("#setup-state", Label).update(
            "this workspace is set up; choose another preset with [b]↑ ↓[/] and press [b]a[/] to switch"
            if configured else
            "[b]first run[/]: no .probe/config.json yet. Press [b]e[/] for the embedded default "
            "(no Docker, works offline), or choose a preset with [b]↑ ↓[/] and press [b]a[/]")
        self.query_one(PresetChoice).focus()  # the arrows choose a preset from the start
        self.detect()

    @work(thread=True, exclusive=True, group="hardware")
    def detect(self) -> None:
        from probe_core.config import load_config
        from probe_core.hardware import detect

        reading, rec = detect()
        cfg = load_config(self.app.root)
        self.app.call_from_thread(self.show_hardware, reading, rec, cfg.preset if cfg else None)

    def show_hardware(self, reading, rec, current: str | None) -> None:
        self.reading, self.recommendation = reading, rec
        if reading.devices:
            gpus = "\n".join(f"  GPU {d.index}: {d.name} · compute {d.compute_capability} · "
                             f"{d.memory_total_gib:.0f} GiB" for d in reading.devices)
        else:
            gpus = f"  no usable NVIDIA GPU ({reading.error or 'none found'})"
        warnings = "".join(f"\n  [yellow]▲ {w}[/]" for w in rec.warnings)
        masked = getattr(self.app, "masked", False)
        self.query_one("#hardware", Static).update(
            f"[b]Hardware[/]\n{gpus}\n"
            f"[b]Recommended[/] [b $accent]{rec.preset}[/]: {mask_text(rec.reason, masked)}{warnings}\n"
            f"[b]TEI image[/] {rec.tei.image} [dim]({rec.tei.architecture})[/]"
            + (f"\n[b]Current[/] {current}" if current else ""))
        pick = current or rec.preset
        for button in self.query(RadioButton):
            if button.name == pick:
                button.value = True

    def chosen(self) -> str:
        rs = self.query_one(RadioSet)
        pressed = rs.pressed_button
        return pressed.name if pressed is not None and pressed.name else "embedded"

    def log_line(self, line: str) -> None:
        self.query_one(RichLog).write(line)

    # -- actions -----------------------------------------------------------------------------
    @on(Button.Pressed, "#apply")
    def action_apply(self) -> None:
        self.start(self.chosen())

    def current(self) -> str | None:
        """The workspace's preset now (None before the first setup)."""
        from probe_core.config import load_config
        from probe_core.errors import ProbeError

        try:
            cfg = load_config(self.app.root)
        except ProbeError:
            return None
        return cfg.preset if cfg else None

    @on(Button.Pressed, "#embedded")
    def action_use_embedded(self) -> None:
        self.start("embedded")

    def start(self, preset: str) -> None:
        if self.busy:
            self.notify("setup is already running", severity="warning")
            return
        if preset == self.current():  # nothing to apply: say so instead of silently setting it up again
            self.notify(f"this workspace already uses {preset}; choose another preset with ↑ ↓ first",
                        title="Setup", severity="warning")
            return
        self.busy = True
        self.query_one("#setup-state", Label).update(f"setting up [b]{preset}[/]…")
        self.apply(preset)

    @work(thread=True, exclusive=True, group="setup")
    def apply(self, preset: str) -> None:
        from probe_core.errors import ProbeError

        say = lambda line: self.app.call_from_thread(self.log_line, line)
        try:
            if preset == "embedded":
                self._configure(preset, None)
                say("[green]✔[/] embedded default: Qdrant Edge in-process + the packaged ONNX embedder")
            else:
                from probe_core.stack import StackController, endpoint_settings

                ctl = StackController()
                settings = ctl.plan(preset)
                say(f"plan: {preset} · TEI image {settings.tei_image_tag} · "
                    + ("GPU " + str(settings.gpu_device) if settings.gpu else "CPU"))
                say("bringing the stack up (docker compose)…")
                status = ctl.up(settings, say=say)
                for line in status.describe():
                    say(line)
                self._configure(preset, endpoint_settings(settings))
                say(f"[green]✔[/] the stack is up; the workspace now uses {preset}")
        except ProbeError as exc:
            say(f"[red]✖ {type(exc).__name__}[/]: {exc}")
            self.app.call_from_thread(self._done, None, str(exc))
            return
        say("indexing the repository…")
        self.app.call_from_thread(self._done, preset, None)

    def _configure(self, preset: str, endpoints: dict | None) -> None:
        from probe_core.config import init_workspace, load_config, save_config

        root = self.app.root
        init_workspace(root, preset=preset)
        cfg = load_config(root)
        endpoints = endpoints or {}
        cfg.qdrant_url = endpoints.get("QDRANT_URL")
        cfg.tei_url = endpoints.get("TEI_EMBED_URL")
        cfg.reranker_url = endpoints.get("RERANKER_URL")
        save_config(root, cfg)

    def _done(self, preset: str | None, error: str | None) -> None:
        self.busy = False
        state = self.query_one("#setup-state", Label)
        if error:
            state.update("[red]could not set up this preset[/] (see below); [b]e[/] sets up the embedded default")
            self.notify(error, title="Setup", severity="error", timeout=10)
            return
        state.update(f"[green]set up: {preset}[/]; indexing (see the dashboard, i)")
        self.app.open_engine(reopen=True)
        self.app.switch_mode("dashboard")
