"""What the TUI shows before the store has loaded: the prepared index that `memtui preview`
and the hook answer from (`core.store.prepared`), opened the way they open it, its entries
listed in the panes' order and the preview injected from its layers. The store then loads
in the background and takes over; the panes' order is the same for both, so nothing moves."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from operator import attrgetter
from typing import overload

from memtui.core.injection import LayerCandidates
from memtui.core.model import LAYERS, Entry, Layer
from memtui.core.paths import Paths
from memtui.core.settings import Settings
from memtui.core.store import prepared as prepared_index
from memtui.core.store.layer_index import LayerIndex, PatchedLayer, conversation_keys
from memtui.core.store.prepared import DamagedPreparedIndex, Prepared, cache_path, check_rows, prepare

log = logging.getLogger("memtui.tui")


def open_prepared(paths: Paths, settings: Settings, building: Callable[[list[str]], object]) -> Prepared:
    """The prepared index as `build_injection` opens it (brought up to date, the layers that
    cannot be rebuilt alone); `building(layers)` is told first when none is saved yet (a
    cold first run)."""
    if not any(cache_path(paths, layer).is_file() for layer in LAYERS):
        building([str(layer) for layer in LAYERS])
    try:
        return prepared_index.open_prepared(paths, settings, spawn=True)  # the Markdown layers beside, in a child
    except DamagedPreparedIndex as exc:
        log.warning("%s", exc)
        return prepare(paths, settings)


def pane_order(layer: str, entries: Sequence[Entry]) -> list[Entry]:
    """A layer's entries in the order its pane lists them ("file order", `layer_index.pane_state`):
    Markdown by file (root-relative path) and line, as the store reads them; conversation
    memories by conversation, the one added to last first, each newest first (memories
    without a conversation last)."""
    if layer == Layer.CONVERSATION:
        keys = conversation_keys([(e.conversation_title, e.updated_at, e.id) for e in entries])
        return [entries[i] for i in sorted(range(len(entries)), key=keys.__getitem__)]
    return sorted(entries, key=attrgetter("rel_path", "line_start"))


class PaneListing(Sequence[Entry]):
    """A prepared layer's entries in pane order, each made from its saved row when first
    asked for: the pane shows a screenful, so the first frame makes a few dozen entries, not
    tens of thousands. The order and the conversation pane's groups (`groups`: title and
    count) were saved with the layer (or found from the rows laid over it). Iterating makes
    every entry at once (`entries`), as the filter and the store's load need them. They are
    the store's entries field for field but for their terms (the panes never read those)."""

    def __init__(self, index: LayerCandidates):
        self.source = index
        self.order, groups = index.pane()  # type: ignore[attr-defined]
        self.groups = [(title, count) for title, _, count in groups]
        self._all: list[Entry] | None = None

    def __len__(self) -> int:
        return len(self.order)

    @overload
    def __getitem__(self, i: int) -> Entry: ...
    @overload
    def __getitem__(self, i: slice) -> list[Entry]: ...
    def __getitem__(self, i: int | slice) -> Entry | list[Entry]:
        every = self._all
        if every is not None:
            return every[i]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return self.source.entry(self.order[i])  # (a negative i counts from the end, as a list's)

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.entries())

    def entries(self) -> list[Entry]:
        """Every entry, in pane order (made once; the ones made already are taken)."""
        if self._all is None:
            made = self.source.all_entries()  # type: ignore[attr-defined]
            self._all = [made[pos] for pos in self.order]
        return self._all


def prepared_entries(index: LayerCandidates) -> Sequence[Entry]:
    """A prepared layer's entries in pane order: a `PaneListing` of a saved layer (its rows
    checked first, so that none fails later, as the panes page through them), the entries
    themselves for a layer indexed here from the memories."""
    if isinstance(index, (LayerIndex, PatchedLayer)):
        check_rows(index)
        return PaneListing(index)
    return pane_order(index.layer, [index.entry(pos) for pos in range(index.size)])
