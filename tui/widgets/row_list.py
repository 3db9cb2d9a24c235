"""A list that renders only the rows on screen: a list of tens of thousands of items costs
no more to show, or to show again after a change, than one of a dozen."""

from __future__ import annotations

from typing import Any

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Input


class RowList(ScrollView, can_focus=True):
    """Items of `ITEM_HEIGHT` lines each, one of them highlighted (`cursor`, an item index).

    A subclass says how many items there are (`item_count`), renders one line of an item
    (`render_item`) and may make some items unselectable (`selectable`: a group's header);
    the cursor keys, paging, clicks and keeping the highlight in view are here."""

    ITEM_HEIGHT = 1
    COMPONENT_CLASSES = {"row-list--cursor", "row-list--cursor-blurred"}
    DEFAULT_CSS = """
    RowList { overflow-x: hidden; }
    RowList > .row-list--cursor { background: $block-cursor-background; color: $block-cursor-foreground; }
    RowList > .row-list--cursor-blurred { background: $primary-muted; color: $foreground; }
    """
    BINDINGS = [
        Binding("up,k", "move(-1)", "Up", show=False),
        Binding("down,j", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "edge(0)", "First", show=False),
        Binding("end", "edge(1)", "Last", show=False),
    ]

    class Moved(Message):
        """The highlighted item changed (`index` None: nothing is highlighted)."""

        def __init__(self, rows: RowList, index: int | None) -> None:
            super().__init__()
            self.rows = rows
            self.index = index

        @property
        def control(self) -> RowList:
            return self.rows

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cursor: int | None = None

    # ---------------------------------------------------------------- what a subclass says
    def item_count(self) -> int:
        raise NotImplementedError

    def selectable(self, index: int) -> bool:
        return True

    def render_item(self, index: int, line: int, width: int) -> Text:
        """Line `line` (0 ≤ line < ITEM_HEIGHT) of item `index`, `width` cells wide at most."""
        raise NotImplementedError

    def empty_text(self) -> Text:
        """The first line of an empty list."""
        return Text("")

    # ---------------------------------------------------------------- content
    def items_changed(self, target: int | None) -> None:
        """The items were replaced: the highlight goes to `target` (an item index; None or
        unselectable: the next selectable item from there, else the previous, else the first)."""
        count = self.item_count()
        size = Size(max(1, self.scrollable_content_region.width), count * self.ITEM_HEIGHT)
        if size != self.virtual_size:
            self.virtual_size = size
        if target is not None and count:
            start = min(target, count - 1)
            target = self.next_selectable(start, 1)
            if target is None:
                target = self.next_selectable(start, -1)
        else:
            target = self.next_selectable(0, 1)
        self.move_cursor(target, force=True)
        self.refresh()

    def next_selectable(self, start: int, step: int) -> int | None:
        count = self.item_count()
        i = start
        while 0 <= i < count:
            if self.selectable(i):
                return i
            i += step
        return None

    # ---------------------------------------------------------------- cursor
    def move_cursor(self, index: int | None, force: bool = False) -> None:
        if index == self.cursor and not force:
            return
        self.cursor = index
        self.scroll_to_cursor()
        self.refresh()
        self.moved(index)

    def moved(self, index: int | None) -> None:
        """Tell the screen the highlight moved (a subclass may say it its own way)."""
        self.post_message(self.Moved(self, index))

    def scroll_to_cursor(self) -> None:
        """Scroll so the highlighted item is on screen. A list with no height yet (hidden
        behind another tab, or not laid out) waits for its next resize, which calls this."""
        height = self.scrollable_content_region.height
        if self.cursor is None or height <= 0:
            return
        top = int(self.scroll_offset.y)
        first, last = self.cursor * self.ITEM_HEIGHT, (self.cursor + 1) * self.ITEM_HEIGHT - 1
        if first < top:
            self.scroll_to(y=first, animate=False, immediate=True)
        elif last >= top + height:
            # its last line at the bottom (an item taller than the list: its first line at the top)
            self.scroll_to(y=last - height + 1 if height >= self.ITEM_HEIGHT else first, animate=False, immediate=True)

    async def _on_key(self, event: events.Key) -> None:
        """A key sent to this list before a priority binding put the focus in an input (`/` or
        `p` in one burst after it) is still this list's: its move is made, and a key of no
        binding here is dropped, never taken by the input's bindings (Textual looks a bubbling
        key's binding up from the focus of the moment)."""
        if isinstance(self.screen.focused, Input):
            event.stop()
            event.prevent_default()
            for binding in self._bindings.key_to_bindings.get(event.key, ()):
                await self.run_action(binding.action)
                break
            return
        await super()._on_key(event)

    def action_move(self, step: int) -> None:
        if self.cursor is None:
            self.move_cursor(self.next_selectable(0, 1))
            return
        target = self.next_selectable(self.cursor + step, step)
        if target is not None:
            self.move_cursor(target)

    def action_page(self, direction: int) -> None:
        count = self.item_count()
        if not count:
            return
        items = max(1, (self.scrollable_content_region.height - 1) // self.ITEM_HEIGHT)
        start = min(max((self.cursor or 0) + direction * items, 0), count - 1)
        target = self.next_selectable(start, direction)
        if target is None:
            target = self.next_selectable(start, -direction)
        if target is not None:
            self.move_cursor(target)

    def action_edge(self, end: int) -> None:
        target = self.next_selectable(self.item_count() - 1, -1) if end else self.next_selectable(0, 1)
        if target is not None:
            self.move_cursor(target)

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        index = (int(self.scroll_offset.y) + offset.y) // self.ITEM_HEIGHT
        if 0 <= index < self.item_count() and self.selectable(index):
            self.move_cursor(index)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def on_resize(self) -> None:
        self.virtual_size = Size(max(1, self.scrollable_content_region.width), self.item_count() * self.ITEM_HEIGHT)
        self.scroll_to_cursor()  # a smaller terminal, or a tab just shown: the selection stays in view
        self.refresh()

    # ---------------------------------------------------------------- rendering
    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        if width <= 0:
            return Strip.blank(width, base)
        row = int(self.scroll_offset.y) + y
        index, line = divmod(row, self.ITEM_HEIGHT)
        if not self.item_count():
            # the hint wraps over the first lines (never cut at the pane's edge)
            lines = self.empty_text().wrap(self.app.console, max(1, width), overflow="ellipsis")
            text = lines[row] if row < len(lines) else Text("")
            text.truncate(width, overflow="ellipsis")
        elif index >= self.item_count():
            return Strip.blank(width, base)
        else:
            text = self.render_item(index, line, width)
        strip = self.strip(text, width, base)
        if index == self.cursor:
            name = "row-list--cursor" if self.has_focus else "row-list--cursor-blurred"
            cursor = self.get_component_rich_style(name, partial=True)
            strip = Strip(Segment.apply_style(strip, post_style=cursor), strip.cell_length)
        return strip

    def strip(self, text: Text, width: int, base: Style) -> Strip:
        segments = list(text.render(self.app.console, end=""))
        return Strip(Segment.apply_style(segments, base)).adjust_cell_length(width, base)
