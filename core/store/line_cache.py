"""What the injection engine keeps between injections (`LineCache`): each entry's line made
once per settings and text, the terms of conversation entries made without them, and the
layer indexes last seen (kept here for `layer_index.snapshot_index`)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import filterfalse
from typing import TYPE_CHECKING

from ..injection import LineMaker, Made
from ..model import Entry, Layer
from ..relevance import terms_of

if TYPE_CHECKING:
    from ..retrieval import SemanticSession
    from .layer_index import LayerIndex


class LineCache:
    """What the engine keeps between injections, owned by whoever makes them (a store, the
    TUI), never by the module: lines already made, by settings and text (an entry's line is
    made once however often its layer's index is rebuilt: an outside edit rebuilds one layer,
    whose texts mostly stay), and the indexes of the layer snapshots seen last (`layer_index.snapshot_index`
    keeps and reads them)."""

    LIMIT = 400_000  # lines kept per settings; past it the cache starts again
    INDEXES = 32  # layer snapshots whose index is kept

    def __init__(self) -> None:
        self.made: dict[tuple[int, bool], dict[str, Made]] = {}
        self.indexes: dict[tuple[str, int], tuple[Sequence[Entry], LayerIndex]] = {}  # (layer, id(snapshot)) -> its index
        # the prepared index's layers (as `memtui preview` saved them), taken for a snapshot
        # that holds exactly their entries instead of indexing it again
        self.saved: dict[str, LayerIndex] = {}
        self.taken: dict[str, LayerIndex] = {}  # layers taken from there, whose lines serve the next snapshot
        self.semantic: SemanticSession | None = None  # §13: the model and its vector cache, once hybrid retrieval asked for them
        self.terms: dict[str, tuple[str, tuple[str, ...], frozenset[str]]] = {}  # see terms_of
        self._words: dict[str, str] = {}

    def terms_of(self, entry: Entry) -> frozenset[str]:
        """`relevance.terms_of`, kept for a conversation entry made without its terms (a loaded
        store's) while its text and tags stay: a changed row rebuilds its layer's index, and
        the other rows' terms are not made again. Only an index built from entries asks."""
        if entry.terms or entry.layer != Layer.CONVERSATION:
            return entry.terms
        known = self.terms.get(entry.id)
        if known is not None and known[0] == entry.text and known[1] == entry.tags:
            return known[2]
        share = self._words.setdefault  # a few thousand distinct terms among tens of thousands of rows
        found = frozenset([share(t, t) for t in terms_of(entry)])
        if len(self.terms) >= self.LIMIT:
            self.terms.clear()
            self._words.clear()
        self.terms[entry.id] = (entry.text, entry.tags, found)
        return found

    def make(self, maker: LineMaker, text: str) -> Made:
        known = self.made.get(maker.key)
        if known is None:
            known = self.made[maker.key] = {}
        made = known.get(text)
        if made is None:
            made = maker.made(text)
            if len(known) >= self.LIMIT:
                known.clear()
            known[text] = made
        return made

    def make_many(self, maker: LineMaker, texts: Sequence[str]) -> list[Made]:
        """`[self.make(maker, text) for text in texts]`, the lines not known yet made in bulk
        (`LineMaker.made_many`), each distinct text once."""
        known = self.made.get(maker.key)
        if known is None:
            known = self.made[maker.key] = {}
        todo = list(dict.fromkeys(filterfalse(known.__contains__, texts)))
        if todo:
            known.update(zip(todo, maker.made_many(todo)))
        made = list(map(known.__getitem__, texts))
        if len(known) >= self.LIMIT:
            known.clear()
        return made
