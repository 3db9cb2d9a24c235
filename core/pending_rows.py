"""The inbox (SPEC §12) of a store whose conversation layer stays in the prepared index
(`core.store.saved_rows.SavedEntries`): the same entries in the same order as
`review.newest_first(review.unreviewed_among(...))`, found in one pass over the saved rows
and kept as positions, each entry made when the inbox shows it."""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Iterator, Sequence
from typing import overload

from . import review
from .made_when_asked import MadeWhenAsked
from .model import LAYERS, Entry
from .store.saved_rows import SavedEntries


def _key(e: Entry) -> tuple[float, int, str, int, str]:
    """`review.newest_first`'s order as one key: newest first, then layer, file, line and id."""
    return (-e.updated_at, LAYERS.index(e.layer), e.rel_path, e.line_start, e.id)


class PendingEntries(MadeWhenAsked[Entry]):
    """Entries awaiting review, newest first: some held (`held`, the Markdown layers'), the
    saved conversation layer's by base position (`order`: i >= 0 a position there, -1 - i
    the held entry i)."""

    def __init__(self, held: list[Entry], saved: SavedEntries, order: array[int]):
        self.held = held
        self.saved = saved
        self.order = order

    def __len__(self) -> int:
        return len(self.order)

    def item_at(self, i: int) -> Entry:
        at = self.order[i]
        return self.saved.at(at) if at >= 0 else self.held[-1 - at]

    def __iter__(self) -> Iterator[Entry]:
        return (self[i] for i in range(len(self)))


def unreviewed_saved(held: Sequence[Entry], saved: SavedEntries, reviewed: set[str]) -> PendingEntries:
    """`review.newest_first(review.unreviewed_among([*held, *saved], reviewed))` with the saved
    layer's entries read in one pass and let go: only the date and position of each entry
    awaiting review are held (in arrays) while they are put in order."""
    mine = review.newest_first(review.unreviewed_among(held, reviewed))
    newest, where = array("d"), array("i")
    for pos, e in enumerate(saved.each_entry()):
        if review.needs_review(e) and (not reviewed or review.review_key(e) not in reviewed):
            newest.append(-e.updated_at)
            where.append(pos)
    ranked = sorted(range(len(where)), key=newest.__getitem__)
    start = 0
    while start < len(ranked):  # one date: by id (a conversation memory's file and line are empty)
        stop = start + 1
        while stop < len(ranked) and newest[ranked[stop]] == newest[ranked[start]]:
            stop += 1
        if stop - start > 1:
            ranked[start:stop] = sorted(ranked[start:stop], key=lambda k: saved.source.fields(where[k], ("id",))[0])  # type: ignore[attr-defined]
        start = stop
    rank = LAYERS.index(saved.source.layer)
    theirs = (((newest[k], rank), where[k]) for k in ranked)  # (a Markdown layer's rank is lower: first at one date)
    held_keys = ((_key(e), -1 - i) for i, e in enumerate(mine))
    merged = heapq.merge(theirs, held_keys, key=lambda item: item[0])
    return PendingEntries(mine, saved, array("i", (at for _, at in merged)))


class PendingItems(Sequence[review.Pending]):
    """`PendingEntries` as the inbox lists them (`review.Pending`, each made when asked for;
    the Markdown entries' provenance read once, as `actions.inbox` reads it)."""

    def __init__(self, entries: PendingEntries, provenance: list[review.Provenance]):
        self.entries = entries
        self._provenance = provenance

    def __len__(self) -> int:
        return len(self.entries)

    @overload
    def __getitem__(self, i: int) -> review.Pending: ...
    @overload
    def __getitem__(self, i: slice) -> list[review.Pending]: ...
    def __getitem__(self, i: int | slice) -> review.Pending | list[review.Pending]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        at = self.entries.order[i]
        return review.Pending(self.entries[i], None if at >= 0 else self._provenance[-1 - at])

    def __iter__(self) -> Iterator[review.Pending]:
        return (self[i] for i in range(len(self)))

    def index_of_id(self, entry_id: str) -> int | None:
        """Where the entry `entry_id` is listed, or None (found without making the entries)."""
        entries = self.entries
        row = entries.saved.index_of_id(entry_id)
        at = -1 if row is None else entries.saved.order[row]
        if at < 0:
            at = next((-1 - i for i, e in enumerate(entries.held) if e.id == entry_id), None)
            if at is None:
                return None
        try:
            return entries.order.index(at)
        except ValueError:
            return None
