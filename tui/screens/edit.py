"""Edit (or create) one memory's text."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Label, Static, TextArea

from memtui.core.model import Entry


class EditScreen(ModalScreen[str | None]):
    """Dismisses with the text, or None when cancelled. `entry` is None for a new memory."""

    BINDINGS = [
        Binding("ctrl+s", "save", "Save", id="edit.save"),
        Binding("escape", "cancel", "Cancel", id="edit.cancel", priority=True),  # the TextArea would take it
    ]

    def __init__(self, title: str, text: str = "", entry: Entry | None = None, layer: str = "",
                 note: str | None = None) -> None:
        super().__init__(classes="dialog-screen")
        self.note = note  # a warning shown above the text (memory off)
        self.title_text = title  # escaped by the caller; shown literally
        self.initial = text
        self.entry = entry
        self.memory_layer = entry.layer if entry is not None else layer
        self.conflict = False
        self.conflict_message = ""

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="edit-dialog"):
            yield Label(Text(self.title_text), classes="dialog-title", markup=False)
            if self.note:
                yield Static(Text(f"⚠ {self.note}"), id="edit-note", markup=False)
            yield Static("", id="conflict-banner", markup=False)
            yield TextArea(self.initial, id="editor", soft_wrap=True, tab_behavior="indent")
            with Horizontal(classes="buttons"):
                yield Button("Save  ctrl+s", id="save", variant="primary")
                yield Button("Cancel  esc", id="cancel")
        yield Footer()  # this dialog's keys, not the main screen's

    def on_mount(self) -> None:
        self._show_conflict()
        editor = self.query_one("#editor", TextArea)
        editor.focus()
        editor.move_cursor(editor.document.end)

    def mark_conflict(self, message: str) -> None:
        """Say the entry changed on disk; shown once composed (the store's change can come
        in before the dialog is)."""
        self.conflict = True
        self.conflict_message = message
        if self.is_mounted:
            self._show_conflict()

    def _show_conflict(self) -> None:
        banner = self.query_one("#conflict-banner", Static)
        banner.update(Text(f"⚠ {self.conflict_message}", style="bold"))
        banner.display = self.conflict

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "save":
            self.action_save()
        else:
            self.action_cancel()

    def action_save(self) -> None:
        self.dismiss(self.query_one("#editor", TextArea).text)

    def action_cancel(self) -> None:
        self.dismiss(None)
