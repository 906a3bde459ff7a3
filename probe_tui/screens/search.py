"""Search (``/``): a query box, filters, the hits, and a preview of the selected hit read from disk."""
from __future__ import annotations

import time

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Input, Label, OptionList, Select
from textual.worker import get_current_worker

from ..format import ms
from ..widgets.preview import Preview
from ..widgets.results import ResultList
from ..widgets.topbar import TopBar

MODES = ("auto", "fast", "quality")
LANGUAGES = ("python", "javascript", "typescript", "tsx", "go", "rust", "java", "c", "cpp", "csharp", "ruby",
             "php", "kotlin", "swift", "markdown", "yaml", "toml", "json", "shell", "text")
KINDS = ("code", "test", "doc", "config")
TYPE_DELAY_S = 0.15  # search when typing pauses this long


class SearchScreen(Screen):
    """Type to search; arrows or j/k move; enter opens the whole range; o switches the mode (not ``m``:
    that is the memory screen's key everywhere)."""

    BINDINGS = [
        Binding("o", "cycle_mode", "Mode", tooltip="mode: auto → fast → quality"),
        Binding("slash", "focus_query", "Query", key_display="/", tooltip="back to the query box"),
        Binding("escape", "focus_results", "Results", show=False,
                tooltip="from a text box to the results; in the range view: back"),
        Binding("e", "focus_instruction", "Instruction", show=False, tooltip="the rerank instruction box"),
    ]
    MODE_KEY = next(b.key for b in BINDINGS if b.action == "cycle_mode")  # the mode label names it

    def __init__(self):
        super().__init__()
        self.mode = "auto"
        self.results: list[dict] = []
        self.last_answer: dict | None = None
        self.preview_source: str | None = None  # "path#Lx-Ly" now in the preview (tests read it)

    def compose(self) -> ComposeResult:
        yield TopBar("search", self.BINDINGS)
        with Horizontal(id="query-row"):
            yield Input(placeholder="search the repository…", id="query", compact=True)
            yield Label("", id="mode")
        with Horizontal(id="filter-row"):
            yield Input(placeholder="rerank instruction (quality)", id="instruction", compact=True)
            yield Select([(x, x) for x in LANGUAGES], prompt="any language", id="lang", compact=True)
            yield Select([(x, x) for x in KINDS], prompt="any kind", id="kind", compact=True)
        yield Label("type a query", id="search-info")
        with Horizontal(id="search-body"):
            yield ResultList(id="results")
            yield Preview(id="preview")
        yield Footer()

    def on_mount(self) -> None:
        self._show_mode()
        self.query_one("#query", Input).focus()

    # -- actions -----------------------------------------------------------------------------
    def action_cycle_mode(self) -> None:
        self.mode = MODES[(MODES.index(self.mode) + 1) % len(MODES)]
        self._show_mode()
        self.run_search(delay=0)

    def action_focus_query(self) -> None:
        self.query_one("#query", Input).focus()

    def action_focus_instruction(self) -> None:
        self.query_one("#instruction", Input).focus()

    def action_focus_results(self) -> None:
        self.query_one(ResultList).focus()

    def _show_mode(self) -> None:
        self.query_one("#mode", Label).update(f"mode [b]{self.mode}[/] ({self.MODE_KEY})")

    # -- searching ---------------------------------------------------------------------------
    @on(Input.Changed, "#query")
    def _query_changed(self) -> None:
        self.run_search(delay=TYPE_DELAY_S)

    @on(Input.Submitted)
    def _submitted(self) -> None:
        self.run_search(delay=0)
        self.query_one(ResultList).focus()

    @on(Select.Changed)
    def _filter_changed(self) -> None:
        self.run_search(delay=0)

    def _filters(self) -> dict:
        out = {}
        lang, kind = self.query_one("#lang", Select).value, self.query_one("#kind", Select).value
        if isinstance(lang, str):
            out["languages"] = [lang]
        if isinstance(kind, str):
            out["chunk_kinds"] = [kind]
        return out

    def run_search(self, delay: float) -> None:
        query = self.query_one("#query", Input).value.strip()
        if not query:
            self.query_one("#search-info", Label).update("type a query")
            return
        self._search(query, self.mode, self.query_one("#instruction", Input).value.strip(), self._filters(), delay)

    @work(thread=True, exclusive=True, group="search")
    def _search(self, query: str, mode: str, instruction: str, filters: dict, delay: float) -> None:
        from probe_core.errors import ProbeError
        from probe_core.records import SearchRequest

        from ..session import SEARCH_TOP_K

        if delay:
            time.sleep(delay)
        if get_current_worker().is_cancelled:
            return
        try:
            answer = self.app.session.search(SearchRequest(query, top_k=SEARCH_TOP_K, mode=mode,
                                                           instruction=instruction or None, filters=filters or None))
        except ProbeError as exc:
            self.app.call_from_thread(self._show_error, str(exc))
            return
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show_answer, answer)

    def _show_error(self, message: str) -> None:
        from rich.text import Text

        self.query_one("#search-info", Label).update(Text(message, style="red"))
        # the last answer's results belong to another query: leaving them would read as this one's
        self.results = []
        self.query_one(ResultList).set_results([])
        self.preview_source = None
        self.query_one(Preview).show_message("no results")

    def _show_answer(self, answer: dict) -> None:
        self.last_answer = answer
        self.results = answer.get("results") or []
        masked = getattr(self.app, "masked", False)
        status = answer.get("status", "healthy")
        colour = {"healthy": "green", "uncertain": "yellow", "degraded": "red"}.get(status, "white")
        took = answer.get("took_ms", answer.get("wall_ms"))
        info = (f"[{colour}]{status}[/] · {len(self.results)} result{'' if len(self.results) == 1 else 's'} · {ms(took, masked)}"
                f" · {answer.get('mode', self.mode)} · gen {answer.get('generation', answer.get('index_generation', '–'))}")
        if answer.get("message"):
            info += f" · [dim]{answer['message']}[/]"
        self.query_one("#search-info", Label).update(info)
        self.query_one(ResultList).set_results(self.results)
        if not self.results:
            self.preview_source = None
            self.query_one(Preview).show_message("no results")

    # -- preview -----------------------------------------------------------------------------
    @on(OptionList.OptionHighlighted, "#results")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_index is not None and event.option_index < len(self.results):
            self._load_preview(self.results[event.option_index])

    @on(OptionList.OptionSelected, "#results")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        from .file_view import FileViewScreen

        r = self.results[event.option_index]
        self.app.push_screen(FileViewScreen(r["path"], r["start_line"], r["end_line"], r.get("language")))

    @work(thread=True, exclusive=True, group="preview")
    def _load_preview(self, r: dict) -> None:
        from probe_core.errors import ProbeError
        from probe_core.scan import read_text

        try:
            text = read_text(self.app.root, r["path"])
        except (OSError, ProbeError) as exc:
            self.app.call_from_thread(self.query_one(Preview).show_message, f"{r['path']}: {exc}")
            return
        if get_current_worker().is_cancelled:
            return

        def show() -> None:
            self.query_one(Preview).show(text, r["path"], r["start_line"], r["end_line"], r.get("language"),
                                         theme_dark=self.app.current_theme.dark)
            self.preview_source = f"{r['path']}#L{r['start_line']}-L{r['end_line']}"
        self.app.call_from_thread(show)
