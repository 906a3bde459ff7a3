"""A modal form the memory and libraries screens share: fields, Save/Cancel, the engine's error inline.

The caller passes ``submit(values) -> result``, a blocking call into ``probe_core`` that raises a
``ProbeError`` on bad input. It runs in a worker thread; on an error the form stays open with the
message under the fields and nothing is written (``probe_core`` validates before it writes); on
success the form closes with the result.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, LoadingIndicator, Select, TextArea

from ..format import mask_text


@dataclass(frozen=True, slots=True)
class Field:
    """One row of the form. ``kind``: ``input`` (one line), ``select`` (one of ``options``), ``text``."""

    name: str
    label: str
    value: str = ""
    kind: str = "input"
    options: tuple[str, ...] = ()
    placeholder: str = ""
    fixed: bool = False  # shown but not editable (a rule's scope and label when editing it)


class FormScreen(ModalScreen):
    """Dismissed with ``submit``'s result, or ``None`` when cancelled."""

    BINDINGS = [
        Binding("ctrl+s", "submit", "Save"),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(self, title: str, fields: list[Field], submit: Callable[[dict[str, str]], object], *,
                 busy_text: str = "saving…"):
        super().__init__()
        self.form_title = title
        self.fields = fields
        self.submit = submit
        self.busy_text = busy_text
        self.busy = False
        self.error: str | None = None  # the last error shown (tests read it)

    def compose(self) -> ComposeResult:
        with Vertical(id="form"):
            yield Label(self.form_title, id="form-title")
            for f in self.fields:
                with Horizontal(classes=f"form-row form-row-{f.kind}"):
                    yield Label(f.label, classes="form-label")
                    yield self._widget(f)
            yield Label("", id="form-error")
            with Horizontal(id="form-busy"):
                yield LoadingIndicator()
                yield Label(self.busy_text, id="form-busy-text")
            with Horizontal(id="form-buttons"):
                yield Button("Save", id="form-save", variant="primary", compact=True)
                yield Button("Cancel", id="form-cancel", compact=True)
                yield Label("ctrl+s save · esc cancel", id="form-hint")

    @staticmethod
    def _widget(f: Field):
        wid = f"field-{f.name}"
        if f.kind == "select":
            return Select([(o, o) for o in f.options], value=f.value or f.options[0], allow_blank=False,
                          id=wid, compact=True, disabled=f.fixed)
        if f.kind == "text":
            return TextArea(f.value, id=wid, soft_wrap=True, show_line_numbers=False, compact=True,
                            disabled=f.fixed)
        return Input(f.value, placeholder=f.placeholder, id=wid, compact=True, disabled=f.fixed)

    def on_mount(self) -> None:
        self.query_one("#form-busy").display = False
        editable = [f for f in self.fields if not f.fixed]
        if editable:
            self.query_one(f"#field-{editable[0].name}").focus()

    def values(self) -> dict[str, str]:
        """What the form holds now, by field name (a select's choice, a text box's whole text)."""
        out: dict[str, str] = {}
        for f in self.fields:
            w = self.query_one(f"#field-{f.name}")
            if isinstance(w, Select):
                out[f.name] = w.value if isinstance(w.value, str) else ""
            elif isinstance(w, TextArea):
                out[f.name] = w.text
            else:
                out[f.name] = w.value
        return out

    # -- actions -----------------------------------------------------------------------------
    @on(Button.Pressed, "#form-save")
    @on(Input.Submitted)
    def action_submit(self) -> None:
        if self.busy:
            return
        self._set_busy(True)
        self.query_one("#form-error", Label).update("")
        values = self.values()
        self.run_worker(lambda: self._call(values), thread=True, exclusive=True, group="form-submit")

    @on(Button.Pressed, "#form-cancel")
    def action_cancel(self) -> None:
        if self.busy:  # the call may already have written: wait for its answer
            self.notify(self.busy_text, severity="warning")
            return
        self.dismiss(None)

    def _call(self, values: dict[str, str]) -> None:
        from probe_core.errors import ProbeError

        try:
            result = self.submit(values)
        except ProbeError as exc:
            self.app.call_from_thread(self._finished, None, str(exc))
            return
        self.app.call_from_thread(self._finished, result, None)

    def _finished(self, result: object | None, error: str | None) -> None:
        self._set_busy(False)
        if error is None:
            self.dismiss(result)
            return
        self.error = error
        shown = mask_text(error, getattr(self.app, "masked", False), str(getattr(self.app, "root", "")) or None)
        self.query_one("#form-error", Label).update(Text.assemble(("✖ ", "bold red"), shown))

    def _set_busy(self, busy: bool) -> None:
        self.busy = busy
        self.query_one("#form-busy").display = busy
        self.query_one("#form-save", Button).disabled = busy
