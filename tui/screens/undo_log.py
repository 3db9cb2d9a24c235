"""The undo log: memtui's own changes in this workspace, newest first. While it is open it
follows the log: a change made by `memtui` in another shell (or an undo here) shows up."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, cast

from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.screen import ModalScreen
from textual.widgets import Footer, Label, Static

from memtui.core import actions
from memtui.core.display import escape_name
from memtui.core.store import Change
from memtui.core.store.edits import MANIFEST

from ..messages import UndoLogChanged

if TYPE_CHECKING:
    from ..app import MemtuiApp

LOG_POLL = 0.5  # seconds between looks at the log's folder while the log is open


def log_stamp(base: Path) -> tuple[tuple[str, int, int], ...]:
    """What changes when a change is logged, undone or settled: each change folder's name
    and its record's mtime and size (a few stats; the records are read only when it moved)."""
    found = []
    try:
        with os.scandir(base) as folders:
            for folder in folders:
                try:
                    st = os.stat(os.path.join(folder.path, MANIFEST))
                except OSError:
                    continue
                found.append((folder.name, st.st_mtime_ns, st.st_size))
    except OSError:
        return ()
    return tuple(sorted(found))


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
        self.stamp: object = None  # the log's as last shown (None: read with the changes given)

    @property
    def memtui(self) -> MemtuiApp:
        return cast("MemtuiApp", self.app)

    def on_mount(self) -> None:
        self.set_interval(LOG_POLL, self.follow)

    @work(thread=True, exclusive=True, group="undo-log", exit_on_error=False)
    def follow(self) -> None:
        """Read the log again when its folder says it changed (off the event loop)."""
        store = self.memtui.store
        stamp = log_stamp(store.log.base)
        if stamp == self.stamp:  # (the first look reads it once more: it may have moved since it was read)
            return
        pending = actions.undo_preview(store)
        self.post_message(UndoLogChanged(actions.undo_log(store), pending.id if pending else None, stamp))

    def on_undo_log_changed(self, message: UndoLogChanged) -> None:
        self.stamp = message.stamp
        self.changes, self.next_id = message.changes, message.pending_id
        try:
            self.query_one("#undo-log", Static).update(log_table(self.changes, self.next_id))
        except NoMatches:  # closing
            pass

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="undo-log-dialog"):
            yield Label("Undo log — newest first", classes="dialog-title")
            with VerticalScroll():
                yield Static(log_table(self.changes, self.next_id), id="undo-log", markup=False)
        yield Footer()  # this dialog's keys, docked at the screen's bottom (not the main screen's)

    def action_close(self) -> None:
        self.dismiss(None)
