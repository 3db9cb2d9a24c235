"""The doctor's findings (SPEC §10): every one listed; enter on one jumps to its entry."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Footer, Label, Static

from memtui.core.display import escape_name
from memtui.core.doctor import Finding

from ..text import fit_path, home_path
from ..widgets.entry_pane import BADGES
from ..widgets.row_list import RowList

SOURCE_WIDTH = 48  # a longer source (a file's full path) is shortened from the left, never wrapped


def finding_prompt(finding: Finding, source_width: int | None = SOURCE_WIDTH) -> Text:
    """`stale  notes.md:3  names `src/old.py`, which does not exist` — every part literal; the
    source shortened to `source_width` (None: whole)."""
    source = home_path(Path(finding.source))
    if source_width is not None:
        source = fit_path(source, source_width)
    return Text.assemble((f"{BADGES.get(finding.kind, finding.kind):<8}", "bold"),
                         (source, "dim"), "  ", escape_name(finding.reason))


class FindingList(RowList):
    """The findings, a line each (rendered only where on screen: a large store has thousands);
    enter chooses the highlighted one."""

    BINDINGS = [Binding("enter", "choose", "Jump", show=False)]

    class Chosen(Message):
        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, findings: Sequence[Finding] | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.findings = findings or []
        self.checking = findings is None

    def on_mount(self) -> None:
        self.items_changed(0)

    def item_count(self) -> int:
        return len(self.findings)

    def render_item(self, index: int, line: int, width: int) -> Text:
        out = finding_prompt(self.findings[index])
        out.no_wrap, out.overflow = True, "ellipsis"
        out.truncate(width, overflow="ellipsis")
        return out

    def empty_text(self) -> Text:
        return Text("Checking…" if self.checking else "Nothing found.", style="dim")

    def action_choose(self) -> None:
        if self.cursor is not None:
            self.post_message(self.Chosen(self.cursor))


class FindingsScreen(ModalScreen[Finding | None]):
    """Returns the chosen finding (the app jumps to its entry), or None."""

    BINDINGS = [Binding("escape,q,D", "close", "Close", id="findings.close")]

    def __init__(self, findings: Sequence[Finding] | None) -> None:
        super().__init__(classes="dialog-screen")
        self.findings = findings

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="findings-dialog"):
            if self.findings is None:
                title = "Doctor — still checking…"
            else:
                title = f"Doctor — {len(self.findings)} finding{'s' if len(self.findings) != 1 else ''}"
            yield Label(title + " (enter jumps to the memory)", classes="dialog-title")
            yield FindingList(self.findings, id="findings-list")
            yield Static(id="findings-whole", markup=False)  # the highlighted finding, unshortened
        yield Footer()  # this dialog's keys, docked at the screen's bottom (not the main screen's)

    def on_row_list_moved(self, _: RowList.Moved) -> None:
        self._show_whole()

    def on_resize(self) -> None:
        self.call_after_refresh(self._show_whole)  # (once the list has its new width)

    def _show_whole(self) -> None:
        """The highlighted finding whole below the list, when its line is cut."""
        rows = self.query_one(FindingList)
        whole = self.query_one("#findings-whole", Static)
        index = rows.cursor
        if not self.findings or index is None:
            whole.display = False
            return
        f = self.findings[index]
        whole.display = finding_prompt(f).cell_len > rows.scrollable_content_region.width
        whole.update(finding_prompt(f, source_width=None))

    def on_finding_list_chosen(self, event: FindingList.Chosen) -> None:
        if self.findings:
            self.dismiss(self.findings[event.index])

    def action_close(self) -> None:
        self.dismiss(None)
