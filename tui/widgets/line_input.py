"""A one-line input whose width is set by the layout (never `auto`): typing lays nothing out."""

from __future__ import annotations

from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import Input


class LineInput(Input):
    """Textual's Input, but a key typed does not lay the screen out again.

    Per change of its value, Input sets its virtual (scrollable) size to its text's width,
    which lays out the whole screen (3-10 ms at the large corpus, then every widget repainted)
    although its own size does not change; the layout then puts the virtual size back, so the
    next key does it again. Here the virtual size is set without a layout: it is only what the
    cursor's horizontal scrolling reads. With `width: auto` (the size follows the text) Input
    asks for the layout itself, as before."""

    def _watch_value(self, value: str) -> None:
        if not self.styles.auto_dimensions:
            self.set_reactive(Widget.virtual_size, Size(self.content_width, 1))
        super()._watch_value(value)
