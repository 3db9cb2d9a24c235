"""The selected entry: its full text first, then where it lives and its fields."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from memtui.core.doctor import Finding
from memtui.core.model import Entry, Layer

from ..text import LAYER_TITLES, name, text
from .entry_pane import BADGES


def injected_line(stat: tuple[Any, ...] | None) -> str:
    """`injected 3 times (claude-code 2, codex 1), last 2026-11-23 10:58 UTC` (or never):
    which assistant received it, when the history says (`history.stats(..., by_target=True)`)."""
    if not stat or not stat[0]:
        return "never injected"
    count, last_ms = stat[0], stat[1]
    to = ", ".join(f"{target} {n}" for target, n in stat[2]) if len(stat) > 2 and stat[2] else ""
    when = datetime.fromtimestamp(last_ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"injected {count} time{'s' if count != 1 else ''}{f' ({to})' if to else ''}, last {when}"


def detail_renderable(entry: Entry, findings: tuple[Finding, ...] = (),
                      stat: tuple[Any, ...] | None = None, forgetting: str = "") -> Group:
    """Text first (what people read), metadata below; every value a literal Text."""
    table = Table.grid(padding=(0, 1))
    table.add_column(style="bold dim", no_wrap=True)
    table.add_column()

    def row(label: str, value: str) -> None:
        table.add_row(label, name(value))

    if entry.layer == Layer.CONVERSATION:
        row("conversation", entry.conversation_title or "(none)")
        row("conversation id", entry.conversation_id or "— (every workspace)")
        row("id", entry.id)
    else:
        lines = f"line {entry.line}" if entry.line_end <= entry.line else f"lines {entry.line}–{entry.line_end}"
        table.add_row("file", Text.assemble(name(entry.rel_path), f", {lines}"))
        if entry.name:
            row("name", entry.name)
        if entry.description:
            row("description", entry.description)
        if entry.section:
            row("section", entry.section)
    row("category", entry.category or "—")
    row("tags", ", ".join(entry.tags) or "—")
    row("source", entry.source or "—")
    row("importance", entry.importance)
    status = entry.status if not entry.raw_status or entry.raw_status == entry.status else f"{entry.status} ({entry.raw_status})"
    row("status", status)
    if entry.superseded_by:
        row("superseded by", entry.superseded_by)  # the new memory's id (SPEC §17)
    row("updated", datetime.fromtimestamp(entry.updated_at, tz=UTC).strftime("%Y-%m-%d %H:%M UTC"))
    row("history", injected_line(stat))
    if forgetting:  # SPEC §18: strength and level, pin, expiry
        row("forgetting", forgetting)
    # the doctor's reasons come right under the text, so a short pane shows them before the fields
    flags = Table.grid(padding=(0, 1))
    flags.add_column(style="bold", no_wrap=True)
    flags.add_column()
    for finding in findings:
        flags.add_row(Text(f"⚑ {BADGES.get(finding.kind, finding.kind)}", style="bold"), name(finding.reason))
    if findings:
        return Group(text(entry.text), Text(""), flags, Text(""), table)
    return Group(text(entry.text), Text(""), table)


class DetailView(VerticalScroll):
    """Everything about the selected entry."""

    _shown: object = ()

    def compose(self) -> ComposeResult:
        yield Static(id="detail-body", markup=False)

    def on_mount(self) -> None:
        self.border_title = "Detail"
        self.show(None)

    def show(self, entry: Entry | None, findings: tuple[Finding, ...] = (),
             stat: tuple[Any, ...] | None = None, forgetting: str = "") -> None:
        key = (entry, findings, stat, forgetting)
        if key == self._shown:
            return  # same entry, same fields: nothing to redraw
        self._shown = key
        body = self.query_one("#detail-body", Static)
        if entry is None:
            body.update(Text("Select a memory to see it here.", style="dim"))
            self.border_title = "Detail"
            return
        body.update(detail_renderable(entry, findings, stat, forgetting))
        self.border_title = f"Detail · {LAYER_TITLES[entry.layer]}"
