"""The order a layer's pane lists its entries in ("file order"), found from each entry's
`PANE_FIELDS` (a saved row's or an entry's), and as the prepared index saves it: the TUI
pages through tens of thousands of entries making only those it shows."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from operator import attrgetter, itemgetter
from typing import Any

from ..model import Layer
from .entry_rows import FIELD_AT, plain

# What a pane's order depends on, per entry (a saved row's fields, or an entry's attributes).
PANE_FIELDS = ("conversation_title", "updated_at", "id", "rel_path", "line_start")
PANE_OF_ROW = itemgetter(*(FIELD_AT[name] for name in PANE_FIELDS))
PANE_OF_ENTRY = attrgetter(*PANE_FIELDS)
PaneGroup = tuple[str, float, int]  # a conversation's title, its newest memory's updated_at, its memories listed
PaneState = tuple[Sequence[int], list[PaneGroup]]


def conversation_keys(items: Sequence[tuple[str, float, str]]) -> list[tuple[bool, float, str, float, str]]:
    """The sort key of each (conversation title, updated_at, id) for the conversation pane:
    its conversation's newest memory (descending), its title, then the memory's own date
    (descending) and id. The pane groups by title in this order."""
    newest: dict[str, float] = {}
    for title, updated, _ in items:
        if updated > newest.get(title, float("-inf")):
            newest[title] = updated
    return [(not title, -newest[title], title, -updated, entry_id) for title, updated, entry_id in items]


def pane_state(layer: str, fields: Sequence[tuple[Any, ...]]) -> PaneState:
    """The positions of a layer's entries (each given as its `PANE_FIELDS`) in the order its
    pane lists them ("file order"): Markdown by file (root-relative path) and line, in a
    stable sort; conversation memories by conversation, the one added to last first, each
    newest first (memories without a conversation last), with the conversations' groups
    (title, newest updated_at, count) in that order."""
    if layer != Layer.CONVERSATION:
        return array("i", sorted(range(len(fields)), key=[(f[3], f[4]) for f in fields].__getitem__)), []
    keys = conversation_keys([f[:3] for f in fields])
    order = array("i", sorted(range(len(fields)), key=keys.__getitem__))
    groups: list[PaneGroup] = []
    last: str | None = None
    for pos in order:
        title = fields[pos][0]
        if title != last or not groups:
            groups.append((title, -keys[pos][1], 1))
            last = title
        else:
            head = groups[-1]
            groups[-1] = (head[0], head[1], head[2] + 1)
    return order, groups


def saved_pane(state: PaneState) -> list[Any]:
    """A pane state as marshal saves it (plain bytes and tuples)."""
    order, groups = state
    raw = order.tobytes() if isinstance(order, (array, memoryview)) else array("i", order).tobytes()
    return [raw, [(plain(title), float(newest), count) for title, newest, count in groups]]


def read_pane(saved: Sequence[Any]) -> PaneState:
    raw, groups = saved
    return memoryview(raw).cast("i"), [tuple(g) for g in groups]
