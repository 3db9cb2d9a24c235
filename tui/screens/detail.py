"""The selected memory's detail as a dialog: on a small terminal the main screen has no room
for the detail view, so Enter on a row shows the same content full screen."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Label, Static

from memtui.core.doctor import Finding
from memtui.core.model import Entry

from ..text import describe
from ..widgets.detail import detail_renderable


class DetailScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,enter,q", "close", "Close", id="detail.close")]

    def __init__(self, entry: Entry, findings: tuple[Finding, ...] = (), stat: tuple[Any, ...] | None = None) -> None:
        super().__init__(classes="dialog-screen")
        self.entry = entry
        self.findings = findings
        self.stat = stat

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="detail-dialog"):
            yield Label(Text(describe(self.entry)), classes="dialog-title", markup=False)
            with VerticalScroll(id="detail-scroll"):
                yield Static(detail_renderable(self.entry, self.findings, self.stat), markup=False)
        yield Footer()  # this dialog's keys, not the main screen's

    def on_mount(self) -> None:
        self.query_one("#detail-scroll").focus()  # up/down and pgup/pgdn scroll a long memory

    def action_close(self) -> None:
        self.dismiss(None)
