"""The entry being edited changed on disk: both versions side by side, the words that differ
marked, and the user decides. Nothing is overwritten silently."""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Label, Static

from memtui.core.display import escape_text

TOKENS = re.compile(r"\s+|\w+|[^\w\s]")


def word_diff(mine: str, theirs: str) -> tuple[Text, Text]:
    """Both texts (escaped), the words only in one of them highlighted."""
    a, b = TOKENS.findall(escape_text(mine)), TOKENS.findall(escape_text(theirs))
    left, right = Text(), Text()
    for op, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            left.append("".join(a[i1:i2]))
            right.append("".join(b[j1:j2]))
        else:
            left.append("".join(a[i1:i2]), style="bold reverse green")
            right.append("".join(b[j1:j2]), style="bold reverse yellow")
    return left, right


class ConflictScreen(ModalScreen[str]):
    """Dismisses with "mine", "theirs", "new" or "edit" (back to editing; also Esc)."""

    BINDINGS = [
        Binding("m", "choose('mine')", "Keep mine", id="conflict.mine"),
        Binding("t", "choose('theirs')", "Take theirs", id="conflict.theirs"),
        Binding("a", "choose('new')", "Save as new", id="conflict.new"),
        Binding("escape,b", "choose('edit')", "Back to editing", id="conflict.edit"),
    ]

    def __init__(self, message: str, mine: str, theirs: str | None, gone: str | None = None) -> None:
        """`gone`: why there is no version on disk to show (default: the entry was deleted)."""
        super().__init__(classes="dialog-screen")
        self.message = message
        self.mine = mine
        self.theirs = theirs
        self.gone = gone or "The entry no longer exists on disk."

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="conflict-dialog"):
            yield Label("Changed on disk while you were editing", classes="dialog-title")
            yield Static(Text(self.message), markup=False, id="conflict-message")
            with Horizontal(id="versions"):
                if self.theirs is not None:
                    left, right = word_diff(self.mine, self.theirs)
                else:
                    left, right = Text(escape_text(self.mine)), Text(self.gone, style="bold")
                with VerticalScroll(id="mine", classes="version"):
                    yield Static(left, markup=False)
                with VerticalScroll(id="theirs", classes="version"):
                    yield Static(right, markup=False, id="theirs-text")
            with Horizontal(classes="buttons"):
                yield Button("Keep mine  m", id="mine-button", variant="warning")
                yield Button("Take theirs  t", id="theirs-button", disabled=self.theirs is None)
                yield Button("Save as new  a", id="new-button", variant="primary")
                yield Button("Back  esc", id="edit-button")
        yield Footer()  # this dialog's keys: the main screen's `t On/off` would read as "Take theirs"

    def on_mount(self) -> None:
        self.query_one("#mine").border_title = "Yours"
        self.query_one("#theirs").border_title = "On disk now"
        self.query_one("#edit-button", Button).focus()

    def action_choose(self, choice: str) -> None:
        if choice == "theirs" and self.theirs is None:
            return
        self.dismiss(choice)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss((event.button.id or "edit-button").removesuffix("-button"))
