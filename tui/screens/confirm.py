"""Asks before something goes, naming exactly what."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Label, Static


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]

    def __init__(self, title: str, body: Text, yes: str = "Delete") -> None:
        super().__init__(classes="dialog-screen")
        self.title_text = title
        self.body = body
        self.yes = yes

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="confirm-dialog"):
            yield Label(Text(self.title_text), classes="dialog-title", markup=False)
            yield Static(self.body, id="confirm-body", markup=False)
            with Horizontal(classes="buttons"):
                yield Button(f"{self.yes}  y", id="yes", variant="error")
                yield Button("Keep  n", id="no")
        yield Footer()  # this dialog's keys; without it the main screen's footer shows through

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")
