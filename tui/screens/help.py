"""Every key, from the bindings themselves, and what the preview shows."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Label, Static


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "close", "Close", id="help.close")]

    def __init__(self, rows: list[tuple[str, str]]) -> None:
        super().__init__(classes="dialog-screen")
        self.rows = rows

    def compose(self) -> ComposeResult:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold", no_wrap=True)
        table.add_column()
        for key, description in self.rows:
            table.add_row(key, description)
        with Vertical(classes="dialog", id="help-dialog"):
            yield Label("memtui — keys", classes="dialog-title")
            with VerticalScroll():
                yield Static(table)
                yield Static(Text(
                    "\nThe fold shows exactly the text Muse would add to its system prompt for the query; "
                    "beside it, one gauge per layer: tokens used of what the layer may spend (its budget plus "
                    "what the layers before it left unused). The fold says 'truncated' when memories were left "
                    "out for the budget and 'N clipped' when injected ones were cut to the length limit. "
                    "Left-out memories come nearest first "
                    "(highest score, then over budget); the rest are counted per reason: below the relevance "
                    "gate, over the token budget, past the layer's maximum items, or archived. Enter on a "
                    "reason lists them."), markup=False)
        yield Footer()  # this dialog's keys, docked at the screen's bottom (not the main screen's)

    def action_close(self) -> None:
        self.dismiss(None)
