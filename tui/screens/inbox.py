"""The inbox (SPEC §12): the memories the assistant wrote on its own (or an import brought in)
that no person has judged yet, newest first. One key each to accept, edit or reject the
selected one; the next one is selected after each. The app runs the writes."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from memtui.core.review import Pending

from ..text import LAYER_TITLES, fit_path, name, one_line, text
from ..widgets.row_list import RowList
from .confirm import ConfirmScreen

if TYPE_CHECKING:
    from ..app import MemtuiApp


ORIGIN_WIDTH = 32  # an import's origin path in a row, shortened from the left past this


def inbox_title(count: int) -> str:
    return f"Inbox · {count} awaiting review" if count else "Inbox · nothing to review"


def pending_line(item: Pending, line: int) -> Text:
    """A pending entry's two lines: its text, then (dimmed) the layer and where it came from;
    every part literal."""
    if line == 0:
        return Text(one_line(item.entry.text))
    out = Text(f"  {LAYER_TITLES[item.entry.layer]} · ", style="dim")
    p = item.provenance
    label = p.label
    if p.kind == "import" and p.origin and label.startswith(f"imported from {p.origin}"):
        # a long absolute path would lead the row: shortened from the left, its file name kept
        label = f"imported from {fit_path(p.origin, ORIGIN_WIDTH)}{label[len('imported from ' + p.origin):]}"
    out.append(name(label).plain, style="dim")
    return out


class PendingList(RowList):
    """What awaits review, two lines per entry, rendered only where on screen (an inbox can
    hold every conversation memory of a workspace: tens of thousands)."""

    ITEM_HEIGHT = 2

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.items: Sequence[Pending] = []

    def show(self, items: Sequence[Pending], target: int | None) -> None:
        self.items = items
        self.items_changed(target)

    def item_count(self) -> int:
        return len(self.items)

    def render_item(self, index: int, line: int, width: int) -> Text:
        out = pending_line(self.items[index], line)
        out.no_wrap, out.overflow = True, "ellipsis"
        out.truncate(width, overflow="ellipsis")
        return out

    def empty_text(self) -> Text:
        return Text("Nothing to review: everything the assistant learned has been judged.", style="dim")


def pending_detail(item: Pending, require_review: bool) -> RenderableType:
    """The whole text first, then where it came from and what accepting or rejecting does."""
    e = item.entry
    table = Table.grid(padding=(0, 1))
    table.add_column(style="bold dim", no_wrap=True)
    table.add_column()
    p = item.provenance
    if p.kind == "conversation":
        table.add_row("from", name(f"conversation “{p.conversation_title or p.conversation_id or 'none'}”"))
    elif p.kind == "import":
        table.add_row("imported from", name(p.origin))
    table.add_row("where", name(f"{LAYER_TITLES[e.layer]} · {e.source_ref}"))
    table.add_row("written", name(datetime.fromtimestamp(e.updated_at, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")))
    table.add_row("source", name(e.source))
    if e.tags:
        table.add_row("tags", name(", ".join(e.tags)))
    if e.section:
        table.add_row("section", name(e.section))
    state = ("not injected until accepted (memory.requireReview is on)" if require_review
             else "a candidate for injection like any memory (memory.requireReview is off)")
    table.add_row("now", Text(state))
    return Group(text(e.text, "bold"), Text(""), table)


class InboxScreen(Screen[None]):
    """The entries awaiting review and the selected one's detail; a, e and x judge it."""

    BINDINGS = [
        Binding("a", "accept", "Accept", id="inbox.accept"),
        Binding("e", "edit", "Edit", id="inbox.edit"),
        Binding("x", "reject", "Reject", id="inbox.reject"),
        Binding("A", "accept_all", "Accept all", id="inbox.accept_all"),
        Binding("u", "undo", "Undo", id="inbox.undo"),
        Binding("escape,i,q", "close", "Back", id="inbox.close"),
    ]

    def __init__(self) -> None:
        super().__init__(id="inbox-screen")
        self.items: Sequence[Pending] = []
        self._index = 0

    @property
    def memtui(self) -> MemtuiApp:
        return cast("MemtuiApp", self.app)

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="◆")
        yield Static(id="inbox-note", markup=False)
        yield PendingList(id="inbox-list")
        with VerticalScroll(id="inbox-detail"):
            yield Static(id="inbox-entry", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(PendingList).border_title = "Awaiting review · newest first"
        self.query_one("#inbox-detail").border_title = "Memory"
        self.show(self.memtui.inbox or [])  # None: not read yet
        self.query_one(PendingList).focus()

    # ------------------------------------------------------------------ showing
    def show(self, items: Sequence[Pending]) -> None:
        """New contents: the selected entry stays selected while it is listed; when it left
        (accepted, edited, rejected) the one that took its place, i.e. the next, is selected."""
        current = self.selected()
        self.items = items  # (a large inbox: made as it is shown, not copied)
        self.sub_title = inbox_title(len(self.items))
        if not self.children:  # a read that came in before the screen composed: on_mount shows it
            return
        index = self._index
        find = getattr(self.items, "index_of_id", None)  # a large inbox finds it without making every entry
        if current is not None and find is not None:
            found = find(current.entry.id)
            index = index if found is None else found
        elif current is not None:
            index = next((i for i, item in enumerate(self.items) if item.entry.id == current.entry.id), index)
        self._index = max(0, min(index, len(self.items) - 1))
        self.query_one(PendingList).show(self.items, self._index if self.items else None)
        require = self.memtui.settings.require_review
        note = Text("What the assistant wrote on its own or an import brought in: judge each one.\n")
        note.append("Until then: " + ("not injected (memory.requireReview is on)." if require
                                      else "may be injected like the rest (memory.requireReview is off)."), style="dim")
        self.query_one("#inbox-note", Static).update(note)
        self._show_detail()

    def _show_detail(self) -> None:
        item = self.selected()
        body: RenderableType = (pending_detail(item, self.memtui.settings.require_review) if item is not None
                                else Text("The assistant's memories and imported ones wait here until you accept, "
                                          "edit or reject them.", style="dim"))
        self.query_one("#inbox-entry", Static).update(body)

    def selected(self) -> Pending | None:
        if not self.items or not self.children:  # not composed yet
            return None
        index = self.query_one(PendingList).cursor
        if index is None or not 0 <= index < len(self.items):
            return None
        return self.items[index]

    def on_row_list_moved(self, event: RowList.Moved) -> None:
        if event.index is not None and self.items:
            self._index = event.index
        self._show_detail()

    # ------------------------------------------------------------------ keys (the app runs the writes)
    def _chosen(self) -> Pending | None:
        item = self.selected()
        if item is None:
            self.memtui.say("Nothing to review.", title="Inbox")
        return item

    def action_accept(self) -> None:
        item = self._chosen()
        if item is not None:
            self.memtui.main.accept_memories([item.entry])

    def action_accept_all(self) -> None:
        """Accept every listed entry; more than one only after asking (u undoes it too)."""
        entries = [item.entry for item in self.items]
        if len(entries) < 2:
            if entries:
                self.memtui.main.accept_memories(entries)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.memtui.main.accept_memories(entries)

        body = Text(f"Accept all {len(entries)} memories awaiting review? They become memories like any other "
                    "(injected when relevant). u undoes it.")
        self.app.push_screen(ConfirmScreen(f"Accept {len(entries)} memories", body, yes="Accept all"), answered)

    def action_edit(self) -> None:
        item = self._chosen()
        if item is not None:
            self.memtui.main.edit_memory(item.entry)

    def action_reject(self) -> None:
        item = self._chosen()
        if item is not None:
            self.memtui.main.reject_memory(item.entry)

    def action_undo(self) -> None:
        self.memtui.main.undo_last()

    def action_close(self) -> None:
        self.app.pop_screen()
