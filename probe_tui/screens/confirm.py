"""A yes/no question over the current screen (removing a rule or a library asks first)."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label


class ConfirmScreen(ModalScreen[bool]):
    """Dismissed with ``True`` (``y``, or the Yes button) or ``False`` (``n``, ``esc``)."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str, yes: str = "Remove"):
        super().__init__()
        self.question = question
        self.yes = yes

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm"):
            yield Label(self.question, id="confirm-question", markup=False)
            with Horizontal(id="confirm-buttons"):
                yield Button(f"{self.yes} (y)", id="confirm-yes", variant="error", compact=True)
                yield Button("Keep (n)", id="confirm-no", compact=True)

    def on_mount(self) -> None:
        self.query_one("#confirm-no", Button).focus()  # enter on the default keeps

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
