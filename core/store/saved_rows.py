"""The conversation layer of a large store left in the prepared index (`SavedEntries`): its
entries in the pane's order, each made from its saved row when asked for, never all held.

A face that lists hundreds of thousands of conversation memories (the TUI at ten times the
large corpus: 365,000 rows of one workspace) would otherwise hold each as an `Entry` (over a
kilobyte each). The prepared index (`core.store.prepared`) already has every row saved, the
panes' order and the conversations' groups: the store takes the layer from it as it is
brought up to date (the rows changed since laid over it), and what is shown is made as it
is shown. A pass over every entry (the inbox, the filter) reads the saved rows a chunk at a
time (`each_entry`); an entry is found by its id through a table of the ids' hashes."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Sequence
from itertools import chain, islice
from typing import TYPE_CHECKING, Any

from ..made_when_asked import MadeWhenAsked
from ..model import Entry

if TYPE_CHECKING:
    from ..injection import LayerCandidates

MADE_KEPT = 4096  # entries made for the panes kept at most (a screenful is a few dozen)


def each_entry(index: LayerCandidates) -> Iterator[Entry]:
    """Every entry of a saved layer (or one with rows laid over it) in base order, none kept."""
    base = getattr(index, "base", None)
    if base is None:
        return index.each_entry()  # type: ignore[attr-defined]
    return _merged(index, base.each_entry(), index.added.entry)  # type: ignore[attr-defined]


def each_id(index: LayerCandidates) -> Iterator[str]:
    """Every entry's id in base order, as `each_entry` reads them."""
    base = getattr(index, "base", None)
    if base is None:
        return index.each_id()  # type: ignore[attr-defined]
    return _merged(index, base.each_id(), lambda pos: index.added.entry(pos).id)  # type: ignore[attr-defined]


def each_fields(index: LayerCandidates, names: Sequence[str]) -> Iterator[tuple[Any, ...]]:
    """Some fields of every entry in base order (`LayerIndex.fields`), as `each_entry` reads
    the rows, no entry made."""
    base = getattr(index, "base", None)
    if base is None:
        return index.each_fields(names)  # type: ignore[attr-defined]
    return _merged(index, base.each_fields(names), lambda pos: index.added.fields(pos, names))  # type: ignore[attr-defined]


def _merged(index: LayerCandidates, saved: Iterator[Any], added: Callable[[int], Any]) -> Iterator[Any]:
    """The values of a patched layer in its new base order: the saved layer's (read in order,
    those taken out skipped) and the added entries', run by run (`Merge.runs`)."""
    at = 0  # the saved position `saved` is at
    for _, new, src, n in index.merge.runs:  # type: ignore[attr-defined]
        if new:
            yield from map(added, range(src, src + n))
            continue
        if src > at:
            next(islice(saved, src - at - 1, None), None)  # the positions taken out
        yield from islice(saved, n)
        at = src + n


class SavedEntries(MadeWhenAsked[Entry]):
    """A prepared conversation layer's entries in pane order (`LayerIndex.pane`), made when
    asked for and few kept (`MADE_KEPT`); `groups` are the pane's conversations (title,
    count). `row_gen` is memtui's change counter over the rows the layer is exactly current
    at. They are the store's entries field for field but for their terms (made when asked)."""

    def __init__(self, index: LayerCandidates, row_gen: int):
        self.source = index
        self.row_gen = row_gen
        self.order, groups = index.pane()  # type: ignore[attr-defined]
        self.groups = [(title, count) for title, _, count in groups]
        self._made: dict[int, Entry] = {}
        self._hashes: array[int] | None = None  # each base position's hash(id), when first looked up
        self._rows_of: array[int] | None = None  # each base position's place in pane order

    def __len__(self) -> int:
        return len(self.order)

    def __bool__(self) -> bool:
        return len(self.order) > 0

    def item_at(self, i: int) -> Entry:
        return self.at(self.order[i])

    def at(self, pos: int) -> Entry:
        """The entry at base position `pos` (made from its row, neither it nor its chunk kept
        by the index: the last few made are kept here)."""
        made = self._made.get(pos)
        if made is None:
            if len(self._made) >= MADE_KEPT:
                self._made.clear()
            made = self._made[pos] = self.source.entry_made(pos)  # type: ignore[attr-defined]
        return made

    def __iter__(self) -> Iterator[Entry]:
        """Every entry in pane order, made in one pass over the saved rows and held meanwhile:
        for a pass that needs no order, `each_entry` holds none."""
        rows = self.pane_rows()
        out: list[Entry | None] = [None] * len(self.order)
        for pos, e in enumerate(self.each_entry()):
            out[rows[pos]] = e
        return iter(out)  # type: ignore[arg-type]

    def each_entry(self) -> Iterator[Entry]:
        """Every entry in base order (the index's), none kept."""
        return each_entry(self.source)

    def pane_rows(self) -> array[int]:
        """Each base position's place in pane order."""
        if self._rows_of is None:
            rows = array("i", bytes(4 * len(self.order)))
            for i, pos in enumerate(self.order):
                rows[pos] = i
            self._rows_of = rows
        return self._rows_of

    def index_of_id(self, entry_id: str) -> int | None:
        """The pane position of the entry `entry_id`, or None (its ids' hashes read once, then
        found in C: no map of every id)."""
        hashes = self._hashes
        if hashes is None:
            hashes = self._hashes = array("q", map(hash, each_id(self.source)))
        h, start = hash(entry_id), 0
        while True:
            try:
                pos = hashes.index(h, start)
            except ValueError:
                return None
            if self.source.fields(pos, ("id",))[0] == entry_id:  # type: ignore[attr-defined]
                return self.pane_rows()[pos]
            start = pos + 1

    def get(self, entry_id: str) -> Entry | None:
        found = self.index_of_id(entry_id)
        return None if found is None else self[found]

    def subset(self, rows: Sequence[int]) -> Sequence[Entry]:
        """The entries at these pane positions, in their order, made when asked for."""
        return Subset(self, rows)


class Subset(MadeWhenAsked[Entry]):
    """Some entries of a `SavedEntries` (a filter's hits), by pane position."""

    def __init__(self, listing: SavedEntries, rows: Sequence[int]):
        self.listing = listing
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    def item_at(self, i: int) -> Entry:
        return self.listing.item_at(self.rows[i])


def every_entry(layers: Sequence[Sequence[Entry]]) -> Iterator[Entry]:
    """The entries of the layers one after the other, a `SavedEntries` read in one pass."""
    return chain.from_iterable(layer.each_entry() if isinstance(layer, SavedEntries) else layer for layer in layers)
