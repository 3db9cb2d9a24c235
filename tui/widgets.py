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
from textual.widgets import Collapsible, Input, OptionList, Static
from textual.widgets.option_list import Option

from memtui.core.injection import InjectionResult
from memtui.core.models import Entry

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


class EntryPane(OptionList):
    """The entries of one layer; conversation entries grouped under their conversation's title."""

    DEFAULT_CSS = ""

    def __init__(self, layer: str, **kwargs) -> None:
        super().__init__(id=f"pane-{layer}", classes="entry-pane", markup=False, **kwargs)
        self.memory_layer = layer
        self.entries: list[Entry] = []
        self.total = 0
        self.border_title = LAYER_TITLES[layer]
        self._width = 0

    def on_resize(self) -> None:
        width = self.scrollable_content_region.width - 1
        if width > 0 and width != self._width and self.entries:
            self.show(self.entries, self.total)

    def show(self, entries: list[Entry], total: int, keep: str | None = None) -> None:
        """Replace the listed entries, keeping the highlight on `keep` (an id) if it is still there."""
        if keep is None:
            current = self.highlighted_entry
            keep = current.id if current else None
        self.entries = entries
        self.total = total
        width = (self.scrollable_content_region.width or max(20, int(self.app.size.width * 0.5) - 4)) - 1
        self._width = width
        options: list[Option] = []
        if self.memory_layer == "conversation":
            groups: dict[str, list[Entry]] = {}
            for e in entries:
                groups.setdefault(e.conversation_title or "(no conversation)", []).append(e)
            for title, group in groups.items():
                options.append(Option(Text(f"▌{title} ({len(group)})", style="bold"), disabled=True))
                options.extend(Option(entry_prompt(e, width), id=e.id) for e in group)
        else:
            options = [Option(entry_prompt(e, width), id=e.id) for e in entries]
        with self.app.batch_update():
            self.clear_options()
            self.add_options(options)
            shown = len(entries)
            self.border_title = f"{LAYER_TITLES[self.memory_layer]} ({total})" if shown == total else \
                f"{LAYER_TITLES[self.memory_layer]} ({shown} of {total})"
            target = None
            if keep is not None:
                try:
                    target = self.get_option_index(keep)
                except Exception:  # the entry is gone
                    target = None
            if target is None:
                target = next((i for i, o in enumerate(self.options) if not o.disabled), None)
            self.highlighted = target

    @property
    def highlighted_entry(self) -> Entry | None:
        if self.highlighted is None or not self.entries:
            return None
        try:
            option = self.get_option_at_index(self.highlighted)
        except Exception:
            return None
        if option.id is None:
            return None
        return next((e for e in self.entries if e.id == option.id), None)


class DetailView(VerticalScroll):
    """Everything about the selected entry: where it lives, its fields, its full text."""

    def compose(self):
        yield Static(id="detail-body", markup=False)

    def on_mount(self) -> None:
        self.border_title = "Detail"
        self.show(None)

    def show(self, entry: Entry | None) -> None:
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
        clipped = [c for c in result.included if c.clipped]
        left_total = result.candidate_count - result.count
        left_out = islice((c for c in result.iter_candidates() if c.status != "included"), 300)
        if clipped:
            out.append(f"Clipped ({len(clipped)})\n", style="bold")
            for c in clipped:
                out.append(f"  {c.entry.source_ref}  ", style="dim")
                out.append(" ".join(c.entry.text.split())[:80] + "\n")
        out.append(f"Left out ({left_total})\n", style="bold")
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
            out.append(f"  … and {left_total - shown} more\n", style="dim")
        if not left_total:
            out.append("  nothing\n", style="dim")
        left.update(out)
