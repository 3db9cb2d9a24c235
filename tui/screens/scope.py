"""What each assistant loads for a file (SPEC §16): `memtui scope PATH` in a dialog, for the
file typed in the preview's files field."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Label, Static

from memtui.core import actions
from memtui.core.display import escape_name
from memtui.core.rules import ASSISTANTS

MARKS = {"loaded": ("loaded", "bold green"), "not_loaded": ("–", "dim"), "model_decides": ("maybe", "yellow"),
         "manual": ("manual", "dim"), "ignored": ("never", "bold red")}


def scope_renderable(report: Any) -> Table:
    """The report as a table: per assistant its files, whether each is loaded, and why; then
    the rules that can never fire. Every path and reason literal."""
    table = Table.grid(padding=(0, 1))
    table.add_column(no_wrap=True)
    table.add_column(no_wrap=True)
    table.add_column()
    data = report.as_dict()
    for assistant in ASSISTANTS:
        decisions = data["assistants"][assistant]
        if not decisions:
            continue
        table.add_row(Text(assistant, style="bold"), "", "")
        for d in decisions:
            mark, style = MARKS[d["state"]]
            table.add_row(Text(f"  {mark}", style=style), Text(escape_name(d["file"])), Text(escape_name(d["why"]), style="dim"))
    if report.never_fires:
        table.add_row(Text("never fires", style="bold red"), "", "")
        for n in report.never_fires:
            table.add_row(Text(f"  {n.rule.assistant}"), Text(escape_name(n.rule.file)), Text(escape_name(n.reason), style="dim"))
    return table


class ScopeScreen(ModalScreen[None]):
    """`memtui scope PATH` for the file in the preview's files field, found in a worker."""

    BINDINGS = [Binding("escape,q", "close", "Close", id="scope.close")]

    def __init__(self, store: Any, path: str) -> None:
        super().__init__(classes="dialog-screen")
        self.store = store
        self.path = path

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="scope-dialog"):
            yield Label(Text(f"What each assistant loads for {escape_name(self.path)}"), classes="dialog-title")
            with VerticalScroll():
                yield Static(Text("looking…", style="dim"), id="scope-report", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.find()

    @work(thread=True, exclusive=True, exit_on_error=False)
    def find(self) -> None:
        report = actions.scope_report(self.store, self.path)
        self.app.call_from_thread(self._show, report)

    def _show(self, report: Any) -> None:
        self.query_one("#scope-report", Static).update(scope_renderable(report))

    def action_close(self) -> None:
        self.dismiss(None)
