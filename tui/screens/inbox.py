"""The inbox (SPEC §12): the memories the assistant wrote on its own (or an import brought in)
that no person has judged yet, newest first. One key each to accept, edit or reject the
selected one; the next one is selected after each. The app runs the writes."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, cast

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, Static
from textual.widgets.option_list import Option

from memtui.core.review import Pending

from ..text import LAYER_TITLES, name, one_line, text

if TYPE_CHECKING:
    from ..app import MemtuiApp


def inbox_title(count: int) -> str:
    return f"Inbox · {count} awaiting review" if count else "Inbox · nothing to review"


def pending_prompt(item: Pending) -> Text:
    """Two lines: the text, then (dimmed) the layer and where it came from; every part literal."""
    out = Text(no_wrap=True, overflow="ellipsis")
    out.append(one_line(item.entry.text))
    out.append(f"\n  {LAYER_TITLES[item.entry.layer]} · ", style="dim")
    out.append(name(item.provenance.label).plain, style="dim")
    return out


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
        self.items: list[Pending] = []
        self._index = 0

    @property
    def memtui(self) -> MemtuiApp:
        return cast("MemtuiApp", self.app)

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="◆")
        yield Static(id="inbox-note", markup=False)
        yield OptionList(id="inbox-list")
        with VerticalScroll(id="inbox-detail"):
            yield Static(id="inbox-entry", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#inbox-list", OptionList).border_title = "Awaiting review · newest first"
        self.query_one("#inbox-detail").border_title = "Memory"
        self.show(self.memtui.inbox or [])  # None: not read yet
        self.query_one("#inbox-list", OptionList).focus()

    # ------------------------------------------------------------------ showing
    def show(self, items: list[Pending]) -> None:
        """New contents: the selected entry stays selected while it is listed; when it left
        (accepted, edited, rejected) the one that took its place, i.e. the next, is selected."""
        current = self.selected()
        self.items = list(items)
        self.sub_title = inbox_title(len(self.items))
        if not self.children:  # a read that came in before the screen composed: on_mount shows it
            return
        options = self.query_one("#inbox-list", OptionList)
        options.clear_options()
        if self.items:
            options.add_options([Option(pending_prompt(item), id=item.entry.id) for item in self.items])
            ids = [item.entry.id for item in self.items]
            index = ids.index(current.entry.id) if current is not None and current.entry.id in ids else self._index
            self._index = max(0, min(index, len(self.items) - 1))
            options.highlighted = self._index
        else:
            options.add_option(Option(Text("Nothing to review: everything the assistant learned has been judged.",
                                           style="dim"), disabled=True))
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
        if not self.items:
            return None
        try:
            index = self.query_one("#inbox-list", OptionList).highlighted
        except Exception:  # not composed yet
            index = None
        if index is None or not 0 <= index < len(self.items):
            return None
        return self.items[index]

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_index is not None and self.items:
            self._index = event.option_index
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
            self.memtui.accept_memories([item.entry])

    def action_accept_all(self) -> None:
        if self.items:
            self.memtui.accept_memories([item.entry for item in self.items])

    def action_edit(self) -> None:
        item = self._chosen()
        if item is not None:
            self.memtui.edit_memory(item.entry)

    def action_reject(self) -> None:
        item = self._chosen()
        if item is not None:
            self.memtui.reject_memory(item.entry)

    def action_undo(self) -> None:
        self.memtui.undo_last()

    def action_close(self) -> None:
        self.app.pop_screen()
