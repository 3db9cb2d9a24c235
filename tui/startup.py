"""What the TUI shows before the store has loaded: the prepared index that `memtui preview`
and the hook answer from (`core.store.prepared`), opened the way they open it, its entries
listed in the panes' order and the preview injected from its layers. The store then loads
in the background and takes over; the panes' order is the same for both, so nothing moves."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from operator import attrgetter
from pathlib import Path
from typing import Any

from memtui.core.injection import InjectionResult, LayerCandidates
from memtui.core.model import LAYERS, Entry, Layer
from memtui.core.paths import Paths
from memtui.core.serve import _inject, _unreviewed_of
from memtui.core.settings import Settings
from memtui.core.store import prepared as prepared_index
from memtui.core.store.layer_index import ENTRY_FIELDS, LayerIndex
from memtui.core.store.prepared import DamagedPreparedIndex, Prepared, cache_name, cache_path, prepare, saved_rows

log = logging.getLogger("memtui.tui")

_PATH_AT = ENTRY_FIELDS.index("path")


def open_prepared(paths: Paths, settings: Settings, building: Callable[[list[str]], object]) -> Prepared:
    """The prepared index as `build_injection` opens it (brought up to date, the layers that
    cannot be rebuilt alone); `building(layers)` is told first when none is saved yet (a
    cold first run)."""
    if not any(cache_path(paths, layer).is_file() for layer in LAYERS):
        building([str(layer) for layer in LAYERS])
    try:
        return prepared_index.open_prepared(paths, settings)
    except DamagedPreparedIndex as exc:
        log.warning("%s", exc)
        return prepare(paths, settings)


def inject_prepared(paths: Paths, prepared: Prepared, settings: Settings, query: str,
                    session: Any = None) -> InjectionResult:
    """The injection over the prepared layers, as `memtui preview` computes it; `session`:
    §13's model and vector cache, kept by the caller between queries (hybrid retrieval)."""
    unreviewed = _unreviewed_of(paths, prepared.indexes) if settings.require_review and settings.enabled else frozenset()
    stamp = prepared.stamp if settings.retrieval == "hybrid" else None
    return _inject(paths, prepared.indexes, settings, query, prepared.failed_layers,
                   list(settings.problems) + prepared.problems, session=session,
                   prepared_stamp=(cache_name(paths), stamp) if stamp else None, unreviewed=unreviewed)


def pane_order(layer: str, entries: Sequence[Entry]) -> list[Entry]:
    """A layer's entries in the order its pane lists them ("file order"): Markdown by file
    (root-relative path) and line, as the store reads them; conversation memories by
    conversation, the one added to last first, each newest first (memories without a
    conversation last)."""
    if layer == Layer.CONVERSATION:
        keys = conversation_keys([(e.conversation_title, e.updated_at, e.id) for e in entries])
        return [entries[i] for i in sorted(range(len(entries)), key=keys.__getitem__)]
    return sorted(entries, key=attrgetter("rel_path", "line_start"))


def conversation_keys(items: Sequence[tuple[str, float, str]]) -> list[tuple[bool, float, str, float, str]]:
    """The sort key of each (conversation title, updated_at, id) for the conversation pane:
    its conversation's newest memory (descending), its title, then the memory's own date
    (descending) and id. The pane groups by title in this order."""
    newest: dict[str, float] = {}
    for title, updated, _ in items:
        if updated > newest.get(title, float("-inf")):
            newest[title] = updated
    return [(not title, -newest[title], title, -updated, entry_id) for title, updated, entry_id in items]


def prepared_entries(index: LayerCandidates) -> list[Entry]:
    """A saved layer's entries in pane order, made from its saved rows. They are the
    store's entries field for field but for their terms (the panes never read those), and
    they are not kept in the index: the store's own replace them once it has loaded."""
    rows = saved_rows(index, keep=False) if isinstance(index, LayerIndex) else None  # the entries hold their values
    if rows is None:  # indexed here from the memories: their entries are there
        entries = [index.entry(pos) for pos in range(index.size)]
    elif all(row[_PATH_AT] is None for row in rows):
        entries = [Entry(*row) for row in rows]  # the row is Entry's fields in order
    else:
        entries = [Entry(*(*row[:_PATH_AT], None if row[_PATH_AT] is None else Path(row[_PATH_AT]), *row[_PATH_AT + 1:]))
                   for row in rows]
    return pane_order(index.layer, entries)
