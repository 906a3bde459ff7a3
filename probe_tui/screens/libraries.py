"""Reference libraries (``l``): documentation folders Probe indexes beside the project; add, index, remove.

Everything goes through ``probe_core.libraries``. Adding (``add_library``) registers the folder and
is quick; a ``LibraryError`` (no such folder, bad or duplicate name) is shown in the form and
nothing is registered. Then, like ``probe library add``, the screen indexes the new library
(``index_library``) in a worker, with its progress in the list; when a running ``probe mcp``
already owns the library, that process indexes and watches it, and the screen says so.
"""
from __future__ import annotations

import time
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Label, Static

from ..format import clip_left, mask_text
from ..widgets.topbar import TopBar
from .confirm import ConfirmScreen
from .form import Field, FormScreen

MODES = ("sync", "incremental")
FIXED_COLUMNS = 66  # name, kind, mode, files, failed, chunks and the cell padding; the path gets the rest
PROGRESS_EVERY_S = 0.25  # at most this often a progress update reaches the UI
PHASES = {"scanning": "scanning", "chunking": "chunking", "sparse": "lexical index", "dense": "embedding"}


def count(value: int | None) -> Text:
    return Text("–" if value is None else f"{value:,}", justify="right")


def failed_count(value: int | None) -> Text:
    """Documents that could not be indexed: red when there are any."""
    return Text("–" if value is None else f"{value:,}", justify="right", style="bold red" if value else "dim")


def progress_text(p) -> str:
    """One line for an ``IndexProgress``: the phase and how far it got."""
    if p is None:
        return "indexing…"
    phase = PHASES.get(p.phase, p.phase)
    if p.phase == "dense" and p.chunks_total:
        return f"{phase} {p.chunks_embedded}/{p.chunks_total} chunks"
    if p.phase in ("scanning", "chunking") and p.files_total:
        return f"{phase} {p.files_scanned}/{p.files_total} files"
    return f"{phase}…"


class LibrariesScreen(Screen):
    """Lists ``list_libraries()``; a library being indexed here shows its progress."""

    BINDINGS = [
        Binding("a", "add", "Add"),
        Binding("x", "index", "Rescan", tooltip="index the highlighted library now"),
        Binding("delete", "remove", "Remove", key_display="del",  # not `d`: the doctor's key everywhere
                tooltip="unregister the highlighted library (asks first)"),
        Binding("r", "reload", "Refresh", show=False,  # in help; the footer keeps 80 columns for quit
                tooltip="read the list again"),
    ]

    def __init__(self):
        super().__init__()
        self.libraries: list[dict] = []
        self.indexing: dict[str, object] = {}  # name -> the latest IndexProgress (None before the first)
        self.loaded = 0  # how many times the list came back (tests wait on it)
        self.indexed = 0  # how many index runs finished (tests wait on it)
        self.select_next: str | None = None

    def compose(self) -> ComposeResult:
        yield TopBar("libraries", self.BINDINGS)
        yield Label("reading the libraries…", id="libraries-summary")
        yield DataTable(id="libraries", cursor_type="row", zebra_stripes=True)
        yield Static("", id="library-detail", classes="panel")
        yield Footer()

    def on_screen_resume(self) -> None:
        self.action_reload()

    # -- loading -----------------------------------------------------------------------------
    def action_reload(self) -> None:
        self.load()

    @work(thread=True, exclusive=True, group="libraries")
    def load(self) -> None:
        from probe_core.errors import ProbeError
        from probe_core.libraries import list_libraries

        try:
            libraries = list_libraries()
        except ProbeError as exc:
            self.app.call_from_thread(self._show_error, str(exc))
            return
        self.app.call_from_thread(self.show_libraries, libraries)

    def _show_error(self, message: str) -> None:
        self.query_one("#libraries-summary", Label).update(Text(message, style="red"))

    def _path(self, path: str | None) -> str:
        return mask_text(str(path or ""), getattr(self.app, "masked", False), str(self.app.root))

    def show_libraries(self, libraries: list[dict]) -> None:
        current = self.selected()
        self.libraries = libraries
        table = self.query_one("#libraries", DataTable)
        table.clear(columns=True)
        width = max(self.size.width - FIXED_COLUMNS, 16)
        table.add_column("name", width=16)
        table.add_column("kind", width=6)
        table.add_column("mode", width=11)
        table.add_column("files", width=6)
        table.add_column("failed", width=6)
        table.add_column("chunks", width=7)
        table.add_column("path", width=width)
        for lib in libraries:
            busy = Text("…", justify="right", style="yellow") if lib["name"] in self.indexing else None
            table.add_row(Text(lib["name"], style="bold"), Text(lib.get("kind") or "", style="cyan"),
                          Text(lib.get("mode") or ""), busy or count(lib.get("files")),
                          busy or failed_count(lib.get("files_failed")), busy or count(lib.get("chunks")),
                          Text(clip_left(self._path(lib.get("path")), width)), key=lib["name"])
        want, self.select_next = self.select_next or (current["name"] if current else None), None
        index = next((i for i, lib in enumerate(libraries) if lib["name"] == want), 0)
        if libraries:
            table.move_cursor(row=index)
        self._show_summary()
        self._show_detail()
        self.loaded += 1

    def _show_summary(self) -> None:
        n = len(self.libraries)
        text = Text()
        if n:
            text.append(f"{n}", style="bold")
            text.append(f" librar{'y' if n == 1 else 'ies'} · agents search them with include_libraries")
        else:
            text.append("no libraries yet: a adds a folder of docs (Markdown, text, reStructuredText, HTML, PDF)")
        for name, p in self.indexing.items():
            text.append(f" · {name}: {progress_text(p)}", style="yellow")
        self.query_one("#libraries-summary", Label).update(text)

    def on_resize(self) -> None:
        if self.loaded:
            self.show_libraries(self.libraries)

    # -- the highlighted library -------------------------------------------------------------
    def selected(self) -> dict | None:
        """The library under the cursor, or ``None`` when there is none."""
        table = self.query_one("#libraries", DataTable)
        if not self.libraries or table.cursor_row >= len(self.libraries):
            return None
        return self.libraries[table.cursor_row]

    @on(DataTable.RowHighlighted, "#libraries")
    def _show_detail(self) -> None:
        lib = self.selected()
        detail = self.query_one("#library-detail", Static)
        if lib is None:
            detail.update(Text("a add a folder · x rescan · del remove · r refresh", style="dim"))
            return
        text = Text()
        text.append(lib["name"], style="bold")
        text.append(f" ({lib.get('kind')}, {lib.get('mode')})", style="dim")
        text.append("\n" + self._path(lib.get("path")))
        if lib["name"] in self.indexing:
            text.append(f"\n{progress_text(self.indexing[lib['name']])}", style="yellow")
        elif lib.get("files") is None:
            text.append("\nnot indexed yet: x indexes it (a running probe mcp indexes and watches it)", style="dim")
        else:
            embedded = lib.get("chunks_embedded")
            files, chunks = lib["files"], lib["chunks"]
            text.append(f"\n{files} file{'' if files == 1 else 's'} · {chunks} chunk{'' if chunks == 1 else 's'}"
                        + (f" · {embedded} with dense vectors" if embedded is not None else ""))
            for failure in lib.get("failures") or []:  # documents that could not be read, and why
                text.append(f"\n✖ {failure['path']}: {failure['error']}", style="red")
        detail.update(text)

    # -- add ---------------------------------------------------------------------------------
    def action_add(self) -> None:
        fields = [
            Field("path", "path", placeholder="a folder of docs (relative: to this repository)"),
            Field("name", "name", placeholder="default: the folder's name"),
            Field("mode", "mode", "sync", kind="select", options=MODES),
        ]

        def submit(v: dict[str, str]) -> dict:
            from probe_core.libraries import add_library

            path, name = self.path_and_name(v)
            return add_library(path, name, mode=v["mode"])

        def added(entry: dict | None) -> None:
            if entry is None:
                return  # cancelled
            self.notify(f"added library {entry['name']!r}; indexing it", title="Library")
            self.select_next = entry["name"]
            self.start_index(entry["name"])

        self.app.push_screen(FormScreen("Add a reference library", fields, submit), added)

    def path_and_name(self, values: dict[str, str]) -> tuple[str, str]:
        """The form's folder (``~`` expanded, relative to this repository) and name (default: the
        folder's name, lowercased)."""
        typed = values["path"].strip()
        if not typed:
            return "", values["name"].strip()
        path = Path(typed).expanduser()
        if not path.is_absolute():
            path = self.app.root / path
        return str(path), values["name"].strip() or path.name.lower()

    # -- index -------------------------------------------------------------------------------
    def action_index(self) -> None:
        lib = self.selected()
        if lib is None:
            self.notify("no library to index", severity="warning")
            return
        self.start_index(lib["name"])

    def start_index(self, name: str) -> None:
        if name in self.indexing:
            self.notify(f"{name} is being indexed already", severity="warning")
            return
        self.indexing[name] = None
        self.load()
        self.index(name)

    @work(thread=True, group="library-index")
    def index(self, name: str) -> None:
        from probe_core.errors import ProbeError
        from probe_core.libraries import index_library

        last = 0.0

        def progress(p) -> None:
            nonlocal last
            now = time.monotonic()
            if now - last >= PROGRESS_EVERY_S:
                last = now
                self.app.call_from_thread(self._progress, name, p)

        try:
            report = index_library(name, progress=progress)
        except ProbeError as exc:
            message, severity = str(exc), "error"
            if "open in another Probe process" in message:
                message, severity = f"{exc}; it is indexed there", "information"
        else:
            message, severity = (f"indexed library {name}: {report.get('files_indexed', 0)} files, "
                                 f"{report.get('chunks_indexed', 0)} chunks"), "information"
            if report.get("files_failed"):
                message += f"; {report['files_failed']} could not be read (see the library's details)"
                severity = "warning"
        self.app.call_from_thread(self._indexed, name, message, severity)

    def _progress(self, name: str, p) -> None:
        if name in self.indexing:
            self.indexing[name] = p
            self._show_summary()
            self._show_detail()

    def _indexed(self, name: str, message: str, severity: str) -> None:
        self.indexing.pop(name, None)
        self.indexed += 1
        self.notify(message, title="Library", severity=severity, timeout=8)
        self.load()

    # -- remove ------------------------------------------------------------------------------
    def action_remove(self) -> None:
        lib = self.selected()
        if lib is None:
            self.notify("no library to remove", severity="warning")
            return
        if lib["name"] in self.indexing:
            self.notify(f"{lib['name']} is being indexed; remove it once that is done", severity="warning")
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.remove(lib["name"])

        question = f"Remove the library {lib['name']!r} and its index?\n\n{self._path(lib.get('path'))}"
        if lib.get("kind") == "folder":
            question += "\n(the folder itself is not touched)"
        self.app.push_screen(ConfirmScreen(question), answered)

    @work(thread=True, group="libraries-write")
    def remove(self, name: str) -> None:
        from probe_core.errors import ProbeError
        from probe_core.libraries import remove_library

        try:
            remove_library(name)
        except ProbeError as exc:
            self.app.call_from_thread(self.notify, str(exc), title="Library", severity="error")
        else:
            self.app.call_from_thread(self.notify, f"removed library {name!r}", title="Library")
        self.app.call_from_thread(self.load)
