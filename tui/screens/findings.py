"""The doctor's findings (SPEC §10): every one listed; enter on one jumps to its entry."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Label, OptionList
from textual.widgets.option_list import Option

from memtui.core.display import escape_name
from memtui.core.doctor import Finding

from ..text import fit_path, home_path
from ..widgets.entry_pane import BADGES

SOURCE_WIDTH = 48  # a longer source (a file's full path) is shortened from the left, never wrapped


def finding_prompt(finding: Finding) -> Text:
    """`stale  notes.md:3  names `src/old.py`, which does not exist` — every part literal."""
    source = fit_path(home_path(Path(finding.source)), SOURCE_WIDTH)
    return Text.assemble((f"{BADGES.get(finding.kind, finding.kind):<8}", "bold"),
                         (source, "dim"), "  ", escape_name(finding.reason))


class FindingsScreen(ModalScreen[Finding | None]):
    """Returns the chosen finding (the app jumps to its entry), or None."""

    BINDINGS = [Binding("escape,q,D", "close", "Close", id="findings.close")]

    def __init__(self, findings: list[Finding] | None) -> None:
        super().__init__(classes="dialog-screen")
        self.findings = findings

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="findings-dialog"):
            if self.findings is None:
                title = "Doctor — still checking…"
            else:
                title = f"Doctor — {len(self.findings)} finding{'s' if len(self.findings) != 1 else ''}"
            yield Label(title + " (enter jumps to the memory)", classes="dialog-title")
            options = [Option(finding_prompt(f), id=str(i)) for i, f in enumerate(self.findings or [])]
            if not options:
                options = [Option(Text("Nothing found." if self.findings is not None else "Checking…",
                                       style="dim"), disabled=True)]
            yield OptionList(*options, id="findings-list")
        yield Footer()  # this dialog's keys, docked at the screen's bottom (not the main screen's)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if self.findings and event.option.id is not None:
            self.dismiss(self.findings[int(event.option.id)])

    def action_close(self) -> None:
        self.dismiss(None)
