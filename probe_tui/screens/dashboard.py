"""The dashboard (``i``): what the indexer is doing now, the watcher, the backends, recent errors."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Label, Static

from ..format import mask_text, rate
from ..widgets.meter import Meter
from ..widgets.topbar import TopBar

PHASE_TEXT = {
    "starting": "starting", "scanning": "scanning files", "chunking": "chunking", "sparse": "lexical index",
    "dense": "embedding", "idle": "up to date", "done": "up to date", "error": "paused (error)",
}


def _role_text(st: dict) -> str:
    """Who does the indexing: this app, or the process it is attached to, named by its kind."""
    from probe_core.engine.lock import owner_name

    role = st.get("role") or "?"
    if role == "owner":
        return "this app indexes and watches"
    if role == "attached":
        pid = f" (pid {st['owner_pid']})" if st.get("owner_pid") else ""
        return f"attached to the running {owner_name(st.get('owner_kind'))}{pid}"
    return role


class DashboardScreen(Screen):
    """Live indexing state, read from the engine's ``index_status`` every half second."""

    BINDINGS = [Binding("x", "app.rescan", "Rescan", tooltip="ask the indexer for a full scan now")]

    def compose(self) -> ComposeResult:
        yield TopBar("dashboard", self.BINDINGS)
        with VerticalScroll(id="dash"):
            with Horizontal(id="dash-top"):
                yield Static(id="phase", classes="panel")
                yield Static(id="backend", classes="panel")
            with Vertical(id="meters", classes="panel"):
                yield Meter("Files", id="m-files")
                yield Meter("Lexical", id="m-lexical")
                yield Meter("Dense", id="m-dense")
            yield Static(id="watcher", classes="panel")
            yield Label("Recent errors", classes="section")
            yield Static("none", id="errors")
        yield Footer()

    def on_mount(self) -> None:
        self.watch(self.app, "status", self.show_status)
        self.watch(self.app, "status_error", self.show_status_error)

    def show_status_error(self, error: str | None) -> None:
        if error:
            self.query_one("#errors", Static).update(f"[b red]engine:[/] {error}")

    def show_status(self, st: dict) -> None:
        app = self.app
        masked = getattr(app, "masked", False)
        if not st:
            role = "not set up" if not app.session.configured else "opening the index…"
            self.query_one("#phase", Static).update(f"[b]Index[/]  {role}")
            return
        p = st.get("progress") or {}
        phase = p.get("phase", "idle")
        in_progress = st.get("indexing_in_progress")
        phase_text = PHASE_TEXT.get(phase, phase)
        if phase == "idle" and in_progress:
            phase_text = "waiting"
        role = st.get("role") or "?"
        role_text = _role_text(st)
        colour = {"up to date": "$success", "paused (error)": "$error"}.get(phase_text, "$accent")
        self.query_one("#phase", Static).update(
            f"[b]Index[/]  [b {colour}]{phase_text}[/]\n"
            f"generation [b]{st.get('index_generation', 0)}[/] · scans {st.get('scans_completed', 0)}\n"
            f"files {st.get('files_indexed', 0)} · chunks {st.get('chunks_indexed', 0)}"
            f" · failed {st.get('files_failed', 0)}\n"
            f"[dim]{role_text}[/]")
        reachable = st.get("backend_reachable")
        reach = {True: "[green]reachable[/]", False: "[red]unreachable[/]", None: "[yellow]unknown[/]"}[reachable]
        model = st.get("embedding_model_id") or "–"
        dims = st.get("embedding_dimensions") or "–"
        store = mask_text(str(st.get("store", "–")), masked, str(app.root))
        self.query_one("#backend", Static).update(
            f"[b]Backend[/]  {reach}\npreset [b]{st.get('preset', '–')}[/] · {model} ({dims}-d)\n"
            f"store {store}\n"
            f"dense coverage {100 * float(st.get('dense_coverage') or 0):.0f}%")
        total_files = p.get("files_total") or 0
        self.query_one("#m-files", Meter).set(p.get("files_scanned", 0) if total_files else st.get("files_indexed", 0),
                                              total_files or st.get("files_indexed", 0))
        chunks_total = p.get("chunks_total") or st.get("chunks_indexed", 0)
        self.query_one("#m-lexical", Meter).set(p.get("chunks_indexed", st.get("chunks_indexed", 0)), chunks_total)
        embedded = max(p.get("chunks_embedded", 0), st.get("chunks_embedded", 0))
        speed = st.get("embed_rate")
        extra = rate(speed, masked) if speed and phase == "dense" else ""
        self.query_one("#m-dense", Meter).set(embedded, chunks_total, extra)
        if st.get("watcher_running"):
            watch = (f"[b]Watcher[/]  [green]watching[/] · pending {st.get('pending_changes', 0)}"
                     f" · batches {st.get('batches_sent', 0)} · debounce {st.get('debounce_s', '–')} s")
        else:
            why = st.get("watcher_error") or ("the owner process watches" if role == "attached" else "not running")
            watch = f"[b]Watcher[/]  [yellow]off[/] ({why})"
        self.query_one("#watcher", Static).update(watch)
        errors = []
        if st.get("last_error"):
            errors.append(f"[red]•[/] {st['last_error']}")
        for e in (st.get("last_errors") or [])[:5]:
            errors.append(f"[red]•[/] {e.get('path')}: {e.get('error')}")
        if st.get("index_config_mismatch"):
            errors.append("[red]•[/] index built with another embedder: rebuild with `probe index --rebuild`")
        text = "\n".join(mask_text(e, masked, str(app.root)) for e in errors) or "[green]none[/]"
        self.query_one("#errors", Static).update(text)
