"""Two memories that contradict each other (SPEC §17), side by side: keep the left one (the
right one is superseded), keep the right one, keep both (remembered as not contradicting), or
edit one of them. Returns the choice; the main screen carries it out."""

from __future__ import annotations

from enum import StrEnum

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Label, Static

from memtui.core.display import escape_name, escape_text
from memtui.core.model import Entry


class Settle(StrEnum):
    """What the person chose for a contradiction."""

    KEEP_LEFT = "keep_left"  # the right one is superseded by the left one
    KEEP_RIGHT = "keep_right"
    KEEP_BOTH = "keep_both"  # they do not contradict: never reported again
    EDIT_LEFT = "edit_left"
    EDIT_RIGHT = "edit_right"


def side(entry: Entry) -> Text:
    """One side: where the memory lives, then its text, every part literal."""
    return Text.assemble((f"{entry.layer} · {escape_name(entry.source_ref)}\n\n", "dim"), escape_text(entry.text))


class ContradictionScreen(ModalScreen[Settle | None]):
    BINDINGS = [
        Binding("l", "settle('keep_left')", "Keep left", id="contradiction.keep_left"),
        Binding("r", "settle('keep_right')", "Keep right", id="contradiction.keep_right"),
        Binding("b", "settle('keep_both')", "Keep both", id="contradiction.keep_both"),
        Binding("e", "settle('edit_left')", "Edit left", id="contradiction.edit_left"),
        Binding("E", "settle('edit_right')", "Edit right", id="contradiction.edit_right"),
        Binding("escape,q", "settle(None)", "Close", id="contradiction.close"),
    ]

    def __init__(self, left: Entry, right: Entry, reason: str) -> None:
        super().__init__(classes="dialog-screen")
        self.left = left
        self.right = right
        self.reason = reason

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="contradiction-dialog"):
            yield Label(Text(f"Contradiction — {self.reason}"), classes="dialog-title", markup=False)
            with Horizontal(id="contradiction-sides"):
                with VerticalScroll(classes="contradiction-side"):
                    yield Static(side(self.left), id="contradiction-left", markup=False)
                with VerticalScroll(classes="contradiction-side"):
                    yield Static(side(self.right), id="contradiction-right", markup=False)
            with Horizontal(classes="buttons"):
                yield Button("Keep left  l", id=Settle.KEEP_LEFT)
                yield Button("Keep right  r", id=Settle.KEEP_RIGHT)
                yield Button("Keep both  b", id=Settle.KEEP_BOTH)
                yield Button("Edit left  e", id=Settle.EDIT_LEFT)
                yield Button("Edit right  E", id=Settle.EDIT_RIGHT)
        yield Footer()

    def action_settle(self, choice: str | None) -> None:
        self.dismiss(Settle(choice) if choice else None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(Settle(event.button.id or ""))
