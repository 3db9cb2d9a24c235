"""The undo log: memtui's own changes in this workspace, newest first."""

from __future__ import annotations

from datetime import UTC, datetime

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Label, Static

from memtui.core.display import escape_name
from memtui.core.store import Change


def log_table(changes: list[Change], next_id: str | None) -> Table | Text:
    if not changes:
        return Text("No changes yet: memtui logs each of its own writes here, and u reverses the newest.",
                    style="dim")
    table = Table.grid(padding=(0, 2))
    table.add_column(no_wrap=True, style="dim")
    table.add_column(no_wrap=True)
    table.add_column()
    for change in changes:
        when = datetime.fromtimestamp(change.time, tz=UTC).strftime("%Y-%m-%d %H:%M")
        if change.id == next_id:
            state = Text("u undoes", style="bold")
        else:
            state = Text(change.status, style="dim")
        table.add_row(when, state, Text(escape_name(change.summary)))
    return table


class UndoLogScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,U", "close", "Close", id="undo_log.close")]

    def __init__(self, changes: list[Change], next_id: str | None) -> None:
        super().__init__(classes="dialog-screen")
        self.changes = changes
        self.next_id = next_id

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="undo-log-dialog"):
            yield Label("Undo log — newest first", classes="dialog-title")
            with VerticalScroll():
                yield Static(log_table(self.changes, self.next_id), id="undo-log", markup=False)
        yield Footer()  # this dialog's keys, docked at the screen's bottom (not the main screen's)

    def action_close(self) -> None:
        self.dismiss(None)
