"""The main screen's widgets: entry panes, the detail view and the injection preview."""

from __future__ import annotations

from datetime import datetime, timezone
from itertools import islice

from rich.cells import cell_len
from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from rich.segment import Segment
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Collapsible, Input, Static

from memtui.core.injection import InjectionResult
from memtui.core.model import Entry

LAYER_TITLES = {"user": "User", "project": "Project", "conversation": "Conversation"}
REASONS = {
    "below_gate": "below gate",
    "budget": "over budget",
    "max_items": "past max items",
    "archived": "archived",
}


def entry_prompt(entry: Entry, width: int = 0) -> Text:
    """One line per entry: the text (cut with … to fit), then section, tags and source, dimmed."""
    line = " ".join(entry.text.split())
    essential = [entry.raw_status or "archived"] if entry.archived else []
    if entry.layer == "conversation":
        essential.append(datetime.fromtimestamp(entry.updated_at, tz=timezone.utc).strftime("%Y-%m-%d"))
    else:
        essential.append(entry.source_ref)
    optional = []
    if entry.section and entry.layer != "conversation":
        optional.append(f"§ {entry.section}")
    if entry.tags:
        optional.append(" ".join(f"#{t}" for t in entry.tags))
    meta = optional + essential
    tail = "  " + "  ".join(meta)
    if width > 0 and cell_len(line) + cell_len(tail) > width and width - cell_len(tail) < width * 0.6:
        tail = "  " + "  ".join(essential)  # narrow pane: the text matters more than section and tags
    text = Text(line, style="dim strike" if entry.archived else "")
    if width > 0:
        room = max(width - cell_len(tail), min(24, width))
        if cell_len(line) > room:
            text.truncate(room - 1)
            text.append("…")
        gap = width - text.cell_len - cell_len(tail)
        if gap > 0:
            text.append(" " * gap)  # the section, tags and source line up on the right
    text.append(tail, style="dim")
    if width > 0:
        text.truncate(width, overflow="ellipsis")
    return text


class EntryPane(ScrollView, can_focus=True):
    """The entries of one layer; conversation entries grouped under their conversation's title.

    A virtual list: only the rows on screen are rendered, so a layer of tens of thousands of
    entries costs no more to show (or to refresh after a reload) than one of a dozen."""

    COMPONENT_CLASSES = {"entry-pane--cursor", "entry-pane--cursor-blurred", "entry-pane--group"}
    DEFAULT_CSS = """
    EntryPane > .entry-pane--cursor { background: $block-cursor-background; color: $block-cursor-foreground; }
    EntryPane > .entry-pane--cursor-blurred { background: $primary 18%; }
    EntryPane > .entry-pane--group { text-style: bold; color: $text-accent; }
    """
    BINDINGS = [
        Binding("up,k", "move(-1)", "Up", show=False),
        Binding("down,j", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "edge(0)", "First", show=False),
        Binding("end", "edge(1)", "Last", show=False),
    ]

    class Highlighted(Message):
        """The highlighted entry changed (it may be None: an empty pane)."""

        def __init__(self, pane: "EntryPane", entry: Entry | None) -> None:
            super().__init__()
            self.pane = pane
            self.entry = entry

    def __init__(self, layer: str, **kwargs) -> None:
        super().__init__(id=f"pane-{layer}", classes="entry-pane", **kwargs)
        self.memory_layer = layer
        self.entries: list[Entry] = []
        self.rows: list[Entry | str] = []  # a str is a conversation's group header
        self.total = 0
        self.cursor: int | None = None
        self._row_of: dict[str, int] = {}
        self._lines: dict[int, Text] = {}
        self.border_title = LAYER_TITLES[layer]

    # ---------------------------------------------------------------- content
    def show(self, entries: list[Entry], total: int, keep: str | None = None) -> None:
        """Replace the listed entries, keeping the highlight on `keep` (an id) if it is still there."""
        if keep is None:
            current = self.highlighted_entry
            keep = current.id if current else None
        self.entries = entries
        self.total = total
        rows: list[Entry | str] = []
        if self.memory_layer == "conversation":
            groups: dict[str, list[Entry]] = {}
            for e in entries:
                groups.setdefault(e.conversation_title or "(no conversation)", []).append(e)
            for title, group in groups.items():
                rows.append(f"▌{title} ({len(group)})")
                rows.extend(group)
        else:
            rows = list(entries)
        self.rows = rows
        self._row_of = {row.id: i for i, row in enumerate(rows) if not isinstance(row, str)}
        self._lines.clear()
        shown = len(entries)
        title = LAYER_TITLES[self.memory_layer]
        self.border_title = f"{title} ({total})" if shown == total else f"{title} ({shown} of {total})"
        size = Size(max(1, self.scrollable_content_region.width), len(rows))
        if size != self.virtual_size:
            self.virtual_size = size
        target = self._row_of.get(keep) if keep is not None else None
        if target is None:
            target = self._next_entry_row(0, 1)
        self._set_cursor(target, force=True)
        self.refresh()

    @property
    def highlighted_entry(self) -> Entry | None:
        if self.cursor is None or self.cursor >= len(self.rows):
            return None
        row = self.rows[self.cursor]
        return None if isinstance(row, str) else row

    def select_id(self, entry_id: str) -> bool:
        row = self._row_of.get(entry_id)
        if row is not None:
            self._set_cursor(row)
        return row is not None

    # ---------------------------------------------------------------- cursor
    def _next_entry_row(self, start: int, step: int) -> int | None:
        i = start
        while 0 <= i < len(self.rows):
            if not isinstance(self.rows[i], str):
                return i
            i += step
        return None

    def _set_cursor(self, row: int | None, force: bool = False) -> None:
        if row == self.cursor and not force:
            return
        old = self.cursor
        self.cursor = row
        for r in (old, row):
            if r is not None:
                self._lines.pop(r, None)
        if row is not None:
            height = self.scrollable_content_region.height or 1
            top = int(self.scroll_offset.y)
            if row < top:
                self.scroll_to(y=row, animate=False, immediate=True)
            elif row >= top + height:
                self.scroll_to(y=row - height + 1, animate=False, immediate=True)
        self.refresh()
        self.post_message(self.Highlighted(self, self.highlighted_entry))

    def action_move(self, step: int) -> None:
        if self.cursor is None:
            self._set_cursor(self._next_entry_row(0, 1))
            return
        target = self._next_entry_row(self.cursor + step, step)
        if target is not None:
            self._set_cursor(target)

    def action_page(self, direction: int) -> None:
        height = max(1, self.scrollable_content_region.height - 1)
        start = (self.cursor or 0) + direction * height
        start = min(max(start, 0), len(self.rows) - 1)
        target = self._next_entry_row(start, direction) or self._next_entry_row(start, -direction)
        if target is not None:
            self._set_cursor(target)

    def action_edge(self, end: int) -> None:
        target = self._next_entry_row(len(self.rows) - 1, -1) if end else self._next_entry_row(0, 1)
        if target is not None:
            self._set_cursor(target)

    def on_click(self, event) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        row = int(self.scroll_offset.y) + offset.y
        if 0 <= row < len(self.rows) and not isinstance(self.rows[row], str):
            self._set_cursor(row)

    def on_focus(self) -> None:
        self._lines.pop(self.cursor, None)
        self.refresh()

    def on_blur(self) -> None:
        self._lines.pop(self.cursor, None)
        self.refresh()

    def on_resize(self) -> None:
        self.virtual_size = Size(max(1, self.scrollable_content_region.width), len(self.rows))
        self._lines.clear()
        self.refresh()

    # ---------------------------------------------------------------- rendering
    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        row = int(self.scroll_offset.y) + y
        base = self.rich_style
        if row >= len(self.rows) or width <= 0:
            return Strip.blank(width, base)
        item = self.rows[row]
        if isinstance(item, str):
            text = Text(item, no_wrap=True, overflow="ellipsis", style=self.get_component_rich_style("entry-pane--group"))
            text.truncate(width, overflow="ellipsis")
        else:
            text = entry_prompt(item, width)
        segments = list(text.render(self.app.console, end=""))
        strip = Strip(Segment.apply_style(segments, base)).adjust_cell_length(width, base)
        if row == self.cursor:
            name = "entry-pane--cursor" if self.has_focus else "entry-pane--cursor-blurred"
            cursor = self.get_component_rich_style(name, partial=True)
            strip = Strip(Segment.apply_style(strip, post_style=cursor), strip.cell_length)
        return strip


class DetailView(VerticalScroll):
    """Everything about the selected entry: where it lives, its fields, its full text."""

    def compose(self):
        yield Static(id="detail-body", markup=False)

    def on_mount(self) -> None:
        self.border_title = "Detail"
        self.show(None)

    _shown: object = ()

    def show(self, entry: Entry | None) -> None:
        if entry == self._shown:
            return  # same entry, same fields: nothing to redraw
        self._shown = entry
        body = self.query_one("#detail-body", Static)
        if entry is None:
            body.update(Text("Select a memory to see it here.", style="dim"))
            return
        table = Table.grid(padding=(0, 1))
        table.add_column(style="bold dim", no_wrap=True)
        table.add_column()
        if entry.layer == "conversation":
            table.add_row("where", f"conversation {entry.conversation_title or '(none)'}")
            table.add_row("conversation", entry.conversation_id or "— (every workspace)")
            table.add_row("id", entry.id)
        else:
            lines = f"line {entry.line}" if entry.line_end <= entry.line else f"lines {entry.line}–{entry.line_end}"
            table.add_row("where", f"{entry.layer} · {entry.rel_path}, {lines}")
            if entry.name:
                table.add_row("name", entry.name)
            if entry.description:
                table.add_row("description", entry.description)
            if entry.section:
                table.add_row("section", entry.section)
        table.add_row("category", entry.category or "—")
        table.add_row("tags", ", ".join(entry.tags) or "—")
        table.add_row("source", entry.source or "—")
        table.add_row("importance", entry.importance)
        status = entry.status if not entry.raw_status or entry.raw_status == entry.status else f"{entry.status} ({entry.raw_status})"
        table.add_row("status", status)
        when = datetime.fromtimestamp(entry.updated_at, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        table.add_row("updated", when)
        body.update(Group(table, Text(""), Text(entry.text)))
        self.border_title = f"Detail · {LAYER_TITLES[entry.layer]}"


class PreviewPane(Vertical):
    """A query, the fold with the exact injected text, and what was left out and why."""

    LEFT_OUT_SHOWN = 60  # a screenful or two; every line here is re-rendered on each update

    def compose(self):
        yield Input(placeholder="Type a message to preview what Muse would inject…", id="query", compact=True)
        with VerticalScroll(id="preview-scroll"):
            with Collapsible(title="…", collapsed=True, collapsed_symbol="▸", expanded_symbol="▾", id="fold"):
                yield Static(id="injected-text", markup=False)
            yield Static(id="left-out", markup=False)

    def on_mount(self) -> None:
        self.border_title = "Injection preview"

    def show(self, result: InjectionResult) -> None:
        fold = self.query_one("#fold", Collapsible)
        injected = self.query_one("#injected-text", Static)
        left = self.query_one("#left-out", Static)
        if result.disabled_reason == "switch_off":
            fold.title = Content("memory is off for this workspace · nothing injected")
            injected.update(Text.assemble(
                ("Memory is off", "bold"), f" — {result.enabled_why}.\n",
                "Press ", ("t", "bold"), " to turn it on for this workspace (or run `memtui enable`)."))
            left.update(Text.assemble(("Memory is off: ", "bold"), "press ", ("t", "bold"), " to turn it on."))
            return
        fold.title = Content(result.summary())
        injected.update(Text(result.text) if result.text else Text("(nothing would be injected)", style="dim"))
        out = Text(no_wrap=True, overflow="ellipsis")
        for problem in result.errors:
            out.append("⚠ ", style="bold red")
            out.append(f"{problem.source}: {problem.message}\n", style="red")
        if result.redacted:
            out.append(f"Redacted {result.redacted} secret{'s' if result.redacted != 1 else ''} ", style="bold")
            out.append("(memory.redactSecrets in the global settings)\n", style="dim")
        clipped = [c for c in result.included if c.clipped]
        left_total = result.candidate_count - result.count
        left_out = islice((c for c in result.iter_candidates() if c.status != "included"), self.LEFT_OUT_SHOWN)
        if clipped:
            out.append(f"Clipped ({len(clipped)})\n", style="bold")
            for c in clipped:
                out.append(f"  {c.entry.source_ref}  ", style="dim")
                out.append(" ".join(c.entry.text.split())[:80] + "\n")
        out.append(f"Left out ({left_total})", style="bold")
        if left_total:
            by_reason = result.status_counts()  # counted without producing every candidate
            by_reason.pop("included", None)
            out.append("  " + " · ".join(f"{n} {REASONS[s]}" for s, n in sorted(by_reason.items())), style="dim")
        out.append("\n")
        shown = 0
        for c in left_out:
            reason = REASONS.get(c.status, c.status)
            if c.status == "below_gate":
                reason = f"below gate ({c.score:.2f})"
            out.append(f"  {reason:<18}", style="yellow" if c.status == "budget" else "dim")
            where = c.entry.source_ref if c.layer != "conversation" else f"“{c.entry.conversation_title or 'no conversation'}”"
            out.append(f"{where}  ", style="dim")
            out.append(" ".join(c.entry.text.split())[:100] + "\n")
            shown += 1
        if shown < left_total:
            out.append(f"  … and {left_total - shown} more (all of them: memtui preview --json)\n", style="dim")
        if not left_total:
            out.append("  nothing\n", style="dim")
        left.update(out)
