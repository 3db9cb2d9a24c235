"""The entries the doctor judges (SPEC §10), as the columns its checks read.

At ten times the large corpus the conversation layer has hundreds of thousands of rows: held
as `Entry` objects they would be most of the doctor's memory (≈470 MB of 930). A large layer
stays in the prepared index (`core.store.saved_rows.SavedEntries`) and is read once, in its
base order, for the few fields the checks judge by (text, id, status, date, importance,
expiry); an entry is made only when a check reports it, or for a check that needs the whole
entry (then one at a time, none kept). A Markdown layer, a small conversation layer and a
plain list of entries (the tests') are their own entries, read the same way."""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain, compress
from typing import Any

from .made_when_asked import MadeWhenAsked
from .model import LAYERS, Entry, Layer, Status
from .store.saved_rows import SavedEntries, each_fields

ALONE_SHARE = 8  # `Columns.where` makes its entries each alone when it keeps under an eighth of them
FIELDS = ("text", "id", "status", "updated_at", "importance", "expires")  # what the checks read of every entry


class Columns(MadeWhenAsked[Entry]):
    """Entries, one layer after another, with the fields the checks read as columns: `text`,
    `ids`, `archived`, `updated_at`, `importance`, `expires`. `self[i]` is the entry itself,
    made from its saved row when its layer stayed in the prepared index."""

    def __init__(self, parts: Iterable[Sequence[Entry]]):
        self.parts: list[Sequence[Entry]] = []
        self.starts: list[int] = []
        self.text: list[str] = []
        self.ids: list[str] = []
        self.archived = bytearray()
        self.updated_at = array("d")
        self.importance: list[str] = []
        self.expires: list[float | None] = []
        for part in parts:
            self.starts.append(len(self.text))
            self.parts.append(part)
            if isinstance(part, SavedEntries):  # the fields from the saved rows, no entry made
                fields: Iterable[tuple[Any, ...]] = each_fields(part.source, FIELDS)
            else:
                fields = ((e.text, e.id, e.status, e.updated_at, e.importance, e.expires) for e in part)
            for text, entry_id, status, updated_at, importance, expires in fields:
                self.text.append(text)
                self.ids.append(entry_id)
                self.archived.append(status == Status.ARCHIVED)  # (`Entry.archived`)
                self.updated_at.append(updated_at)
                self.importance.append(importance)
                self.expires.append(expires)

    @classmethod
    def of(cls, entries: Sequence[Entry]) -> Columns:
        """`entries` as columns (themselves when they are)."""
        return entries if isinstance(entries, Columns) else cls([entries])

    def __len__(self) -> int:
        return len(self.text)

    def item_at(self, i: int) -> Entry:
        place = self.list_index(i)
        at = bisect_right(self.starts, place) - 1
        part, pos = self.parts[at], place - self.starts[at]
        return part.at(pos) if isinstance(part, SavedEntries) else part[pos]

    def __iter__(self) -> Iterator[Entry]:
        """Every entry in order, made as it comes (none kept)."""
        return chain.from_iterable(map(_each, self.parts))

    def where(self, keep: Callable[[int], bool]) -> Iterator[Entry]:
        """The entries at the places `keep` accepts, in order, made as they come (none kept):
        each alone when they are few, else in one pass over the parts (a saved row read alone
        costs several times one read in a pass: with injection history at ten times the store,
        `never_injected` keeps 365,000 of 394,000, 16 s alone against ~3 s in a pass)."""
        places = [i for i in range(len(self)) if keep(i)]
        if len(places) * ALONE_SHARE < len(self):
            return map(self.__getitem__, places)
        wanted = bytearray(len(self))
        for i in places:
            wanted[i] = 1
        return compress(iter(self), wanted)

    def in_order(self, order_of: Callable[[Entry], tuple[Any, ...]]) -> Visible:
        """The entries not archived, sorted by `order_of` (`doctor.reported_order`): a
        conversation entry left in the prepared index sorts by its layer, date and id, which
        is all `order_of` reads of one, taken from the columns."""
        saved = [range(start, start + len(part)) for start, part in zip(self.starts, self.parts)
                 if isinstance(part, SavedEntries)]
        conversation = LAYERS.index(Layer.CONVERSATION)

        def key(i: int) -> tuple[Any, ...]:
            if any(i in r for r in saved):
                return conversation, "", 0, self.updated_at[i], self.ids[i]
            return order_of(self[i])
        return Visible(self, array("i", sorted((i for i in range(len(self)) if not self.archived[i]), key=key)))


class Visible(MadeWhenAsked[Entry]):
    """Some of the `Columns`' entries in an order, their texts as a column (`text`), each
    entry made when asked."""

    def __init__(self, columns: Columns, order: Sequence[int]):
        self.columns = columns
        self.order = order
        self.text = [columns.text[i] for i in order]

    def __len__(self) -> int:
        return len(self.order)

    def item_at(self, i: int) -> Entry:
        return self.columns[self.order[i]]


def _each(part: Sequence[Entry]) -> Iterable[Entry]:
    """A part's entries in the order its columns are: a layer left in the prepared index in
    its base order (one pass over the saved rows), others as they are."""
    return part.each_entry() if isinstance(part, SavedEntries) else part


def prefiltered(entries: Sequence[Entry] | Iterable[Entry], keep: Callable[[Columns, int], bool]) -> Iterable[Entry]:
    """The entries a check judges, those that cannot be found left out first by their columns
    (`keep`: a condition every finding of the check meets) when they are `Columns`; a plain
    list as it is. The check then applies its whole rule to what is left."""
    if isinstance(entries, Columns):
        return entries.where(lambda i: keep(entries, i))
    return entries


def texts_of(entries: Sequence[Entry]) -> Sequence[str]:
    """The entries' texts, in order (a column when they are columns)."""
    return entries.text if isinstance(entries, (Columns, Visible)) else [e.text for e in entries]
