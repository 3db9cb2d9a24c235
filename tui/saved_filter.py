"""The filter over a conversation layer left in the prepared index (`SavedEntries`): the same
hits in the same order as the main screen's filter over a list of entries, without a string
(nor an entry) per row held: each row's filter string is kept in one UTF-8 blob, made in one
pass over the saved rows when the layer is first filtered, and the hits are listed as pane
positions (`Subset`), grouped under their conversation's title as the pane groups them."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from typing import Any

from memtui.core.model import Entry
from memtui.core.store.saved_rows import SavedEntries, Subset


class SavedChoices(Sequence[str]):
    """Each base position's filter string (`choice(entry)`), and its conversation title."""

    def __init__(self, listing: SavedEntries, choice: Callable[[Entry], str]):
        self.listing = listing
        blob = bytearray()
        ends = array("q", [0])
        titles: dict[str, int] = {}
        title_of = array("i")
        for e in listing.each_entry():
            blob += choice(e).encode("utf-8", "surrogatepass")
            ends.append(len(blob))
            title_of.append(titles.setdefault(e.conversation_title, len(titles)))
        self._blob = blob  # (not copied to bytes: twice its size meanwhile)
        self._ends = ends
        self.titles = list(titles)
        self.title_of = title_of

    def __len__(self) -> int:
        return len(self._ends) - 1

    def __getitem__(self, i):
        return self._blob[self._ends[i]:self._ends[i + 1]].decode("utf-8", "surrogatepass")


    def extract(self, query: str, scorer: Any, cutoff: float, block: int = 8192) -> list[tuple[float, int]]:
        """`process.extract` over every choice (by base position), a block at a time: rapidfuzz
        makes a list of the choices it is given, and a block is what is held of them."""
        from rapidfuzz import process

        found: list[tuple[float, int]] = []  # (score, base position): the strings are not kept
        for start in range(0, len(self), block):
            part = [self[i] for i in range(start, min(start + block, len(self)))]
            found += [(score, start + i) for _, score, i in
                      process.extract(query, part, scorer=scorer, processor=None, score_cutoff=cutoff, limit=None)]
        return found


class Hits(Subset):
    """A filter's hits as pane positions, with their conversations' groups (title, count)."""

    def __init__(self, listing: SavedEntries, rows: Sequence[int], groups: list[tuple[str, int]]):
        super().__init__(listing, rows)
        self.groups = groups


def hits(choices: SavedChoices, found: list[tuple[float, int]]) -> Hits:
    """The hits (`process.extract`'s, by base position) best first, then in pane order, grouped
    under their conversation's title in the order of each group's first hit."""
    rows_of = choices.listing.pane_rows()
    ranked = sorted(found, key=lambda h: (-h[0], rows_of[h[1]]))
    by_title: dict[int, list[int]] = {}
    for _, pos in ranked:
        by_title.setdefault(choices.title_of[pos], []).append(rows_of[pos])
    rows = array("i")
    for members in by_title.values():
        rows.extend(members)
    return Hits(choices.listing, rows, [(choices.titles[t], len(m)) for t, m in by_title.items()])
