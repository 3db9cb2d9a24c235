"""One layer's entries as a virtual list: text first, then section, tags and where it lives."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, overload

from rich.cells import cell_len
from rich.text import Text
from textual.message import Message

from memtui.core.display import escape_name
from memtui.core.finding_set import FindingIndex
from memtui.core.model import Entry, Layer

from ..text import LAYER_TITLES, one_line
from .row_list import RowList

TEXT_SHARE = 0.55  # the text keeps at least this share of a row; the metadata yields first


def shorten_left(value: str, room: int) -> str:
    """`…/notes/tools.md:12`: a path cut at the front, so the file and line stay visible."""
    if cell_len(value) <= room:
        return value
    if room <= 1:
        return "…"[:room]
    cut = value
    while cut and cell_len(cut) > room - 1:
        cut = cut[1:]
    return "…" + cut


def shorten_path(where: str, room: int) -> str:
    """`decisions/2026-03-api.md:10` in `room` cells: the folders go first (`…/2026-03-api.md:10`),
    then the file name is cut from the left; the line number always stays."""
    if cell_len(where) <= room or "/" not in where:
        return shorten_left(where, room)
    short = "…/" + where.rsplit("/", 1)[1]
    return short if cell_len(short) <= room else shorten_left(where.rsplit("/", 1)[1], room)


BADGES = {"stale_reference": "stale", "duplicate": "dup", "unreachable": "unreach", "never_injected": "never",
          "invalid": "invalid", "index": "index", "unreviewed": "review", "already_loaded": "loaded",
          "over_limit": "limit", "secret": "secret", "conflict": "merge",
          "never_fires": "nofire", "contradiction": "contra"}
BADGES.update({"expired": "expired", "to_evict": "evict"})  # SPEC §18


def badge_for(kinds: list[str]) -> str:
    """The doctor's findings on one entry as short markers: `⚑stale,dup`."""
    names = list(dict.fromkeys(BADGES.get(k, k) for k in kinds))
    return "⚑" + ",".join(names) if names else ""


def entry_prompt(entry: Entry, width: int = 0, badge: str = "") -> Text:
    """One row: the entry's text (cut with … to fit), then section, tags and where it lives,
    dimmed and aligned right. In a narrow pane the section and tags go first, then the path
    is shortened from the left: the text is what people scan."""
    line = one_line(entry.text)
    status = [escape_name(entry.raw_status or "archived")] if entry.archived else []
    if entry.layer == Layer.CONVERSATION:
        where = datetime.fromtimestamp(entry.updated_at, tz=UTC).strftime("%Y-%m-%d")
    else:
        where = escape_name(entry.source_ref)
    status = [*status, badge] if badge else status
    essential = [*status, where]
    optional = []
    if entry.section and entry.layer != Layer.CONVERSATION:
        optional.append(f"§ {escape_name(entry.section)}")
    if entry.tags:
        optional.append(" ".join(f"#{escape_name(t)}" for t in entry.tags))
    tail = "  " + "  ".join(optional + essential)
    if width > 0 and cell_len(line) + cell_len(tail) > width:
        tail = "  " + "  ".join(essential)
        room = max(8, int(width * (1 - TEXT_SHARE)))
        fixed = cell_len("  ".join(status)) + (2 if status else 0)
        # a badge takes its room from the text, not from the file name: `…/api.md:10`, never `…i.md:10`
        whole_name = 2 + fixed + cell_len(shorten_path(where, cell_len(where.rsplit("/", 1)[-1]) + 2))
        if status and whole_name <= width * (1 - TEXT_SHARE / 2):
            room = max(room, whole_name)
        if cell_len(tail) > room:
            tail = "  " + "  ".join([*status, shorten_path(where, max(room - 2 - fixed, 6))])
    text = Text(line, style="dim strike" if entry.archived else "", no_wrap=True)
    if width > 0:
        room = max(width - cell_len(tail), 1)
        if cell_len(line) > room:
            text.truncate(max(room - 1, 0))
            text.append("…")
        gap = width - text.cell_len - cell_len(tail)
        if gap > 0:
            text.append(" " * gap)
    text.append(tail, style="dim")
    if width > 0:
        text.truncate(width, overflow="ellipsis")
    return text


NO_CONVERSATION = "(no conversation)"


class PaneRows(Sequence["Entry | str"]):
    """A pane's rows: `entries` (a sequence in pane order, whose entries may be made only
    when asked for) with each group's header (a str, escaped) before its `count` entries;
    no groups: the entries alone. A row's entry is looked up, not copied: a pane of tens of
    thousands of entries lists them without a list of its rows."""

    def __init__(self, entries: Sequence[Entry], groups: Sequence[tuple[str, int]] = ()):
        self.entries = entries
        self.header_rows: list[int] = []  # the row of each group's header, ascending
        self.headers: list[str] = []
        row = 0
        for title, count in groups:
            self.header_rows.append(row)
            self.headers.append(f"▌{escape_name(title or NO_CONVERSATION)} ({count})")
            row += count + 1
        self.size = row if self.header_rows else len(entries)
        self._row_of: dict[str, int] | None = None

    def __len__(self) -> int:
        return self.size

    def _group(self, row: int) -> int:
        return bisect_right(self.header_rows, row) - 1  # the group the row is in (its header at or before it)

    def is_header(self, row: int) -> bool:
        group = self._group(row)
        return group >= 0 and self.header_rows[group] == row

    @overload
    def __getitem__(self, row: int) -> Entry | str: ...
    @overload
    def __getitem__(self, row: slice) -> list[Entry | str]: ...
    def __getitem__(self, row: int | slice) -> Entry | str | list[Entry | str]:
        if isinstance(row, slice):
            return [self[r] for r in range(*row.indices(self.size))]
        if row < 0:
            row += self.size
        if not 0 <= row < self.size:
            raise IndexError(row)
        if not self.header_rows:
            return self.entries[row]
        group = self._group(row)
        if self.header_rows[group] == row:
            return self.headers[group]
        return self.entries[row - group - 1]  # one header before each of the group's entries

    def row_of(self, entry_id: str) -> int | None:
        """The row of the entry `entry_id` (found once for all entries, when first asked; a
        large conversation layer's `SavedEntries` finds it itself, without making them)."""
        find = getattr(self.entries, "index_of_id", None)
        if find is not None:
            i = find(entry_id)
            if i is None:
                return None
            group = bisect_right([row - g for g, row in enumerate(self.header_rows)], i) - 1
            return i + group + 1 if self.header_rows else i
        if self._row_of is None:
            found: dict[str, int] = {}
            group, next_header = -1, 0
            headers = self.header_rows
            for i, entry in enumerate(self.entries):
                while next_header < len(headers) and headers[next_header] <= i + group + 1:
                    group += 1
                    next_header += 1
                found[entry.id] = i + group + 1
            self._row_of = found
        return self._row_of.get(entry_id)


def pane_rows(layer: str, entries: Sequence[Entry]) -> PaneRows:
    """A layer's rows: conversation entries grouped under their conversation's title (the
    groups in the order of their first entry; a `PaneListing`'s saved groups as they are)."""
    if layer != Layer.CONVERSATION:
        return PaneRows(entries)
    saved = getattr(entries, "groups", None)
    if saved is not None:
        return PaneRows(entries, saved)
    groups: dict[str, list[Entry]] = {}
    for e in entries:
        groups.setdefault(e.conversation_title, []).append(e)
    return PaneRows([e for group in groups.values() for e in group], [(t, len(g)) for t, g in groups.items()])


class EntryPane(RowList):
    """The entries of one layer; conversation entries grouped under their conversation's title.

    A virtual list: only the rows on screen are rendered, so a layer of tens of thousands of
    entries costs no more to show (or to refresh after a reload) than one of a dozen."""

    COMPONENT_CLASSES = {*RowList.COMPONENT_CLASSES, "entry-pane--group"}
    DEFAULT_CSS = """
    EntryPane > .entry-pane--group { text-style: bold; color: $text-accent; }
    """

    class Highlighted(Message):
        """The highlighted entry changed (it may be None: an empty pane)."""

        def __init__(self, pane: EntryPane, entry: Entry | None) -> None:
            super().__init__()
            self.pane = pane
            self.entry = entry

    def __init__(self, layer: str, **kwargs: Any) -> None:
        super().__init__(id=f"pane-{layer}", classes="entry-pane", **kwargs)
        self.memory_layer = layer
        self.entries: Sequence[Entry] = []
        self.rows = PaneRows([])  # a str is a conversation's group header (already escaped)
        self.total = 0
        self.badges = FindingIndex()  # the doctor's findings per entry, shown as markers (badge_for)
        self.border_title = LAYER_TITLES[layer]

    # ---------------------------------------------------------------- content
    def show(self, entries: Sequence[Entry], total: int, keep: str | None = None) -> None:
        """Replace the listed entries, keeping the highlight on `keep` (an id) or on the
        highlighted entry; when that one is gone (deleted), on its neighbour: the entry
        that now holds its row, or the last one."""
        old_row = self.cursor
        if keep is None:
            current = self.highlighted_entry
            keep = current.id if current else None
        self.entries = entries
        self.total = total
        self.rows = rows = pane_rows(self.memory_layer, entries)
        shown = len(entries)
        title = LAYER_TITLES[self.memory_layer]
        self.border_title = f"{title} ({total})" if shown == total else f"{title} ({shown} of {total})"
        target = rows.row_of(keep) if keep is not None else None
        self.items_changed(old_row if target is None and keep is not None else target)

    @property
    def highlighted_entry(self) -> Entry | None:
        if self.cursor is None or self.cursor >= len(self.rows):
            return None
        row = self.rows[self.cursor]
        return None if isinstance(row, str) else row

    def select_id(self, entry_id: str) -> bool:
        row = self.rows.row_of(entry_id)
        if row is not None:
            self.move_cursor(row)
        return row is not None

    # ---------------------------------------------------------------- the list's rows
    def item_count(self) -> int:
        return len(self.rows)

    def selectable(self, index: int) -> bool:
        return not self.rows.is_header(index)

    def moved(self, index: int | None) -> None:
        self.post_message(self.Highlighted(self, self.highlighted_entry))

    def empty_text(self) -> Text:
        """What an empty pane says: how to fill it, or that the filter hides everything."""
        if self.loading:
            hint = ""
        elif self.total:
            hint = "Nothing here matches the filter (enter goes to a layer that has matches; esc clears it)."
        elif self.memory_layer == Layer.CONVERSATION:
            hint = "No conversation memories for this workspace yet: Muse writes them as you chat."
        else:
            hint = "No memories yet: press n to write one, or run `memtui import` to bring some in."
        return Text(hint, style="dim italic")

    def render_item(self, index: int, line: int, width: int) -> Text:
        item = self.rows[index]
        if isinstance(item, str):
            text = Text(item, no_wrap=True, overflow="ellipsis", style=self.get_component_rich_style("entry-pane--group"))
            text.truncate(width, overflow="ellipsis")
            return text
        return entry_prompt(item, width, badge_for(self.badges.kinds(item.id)))
