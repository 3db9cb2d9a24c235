"""The prepared index: what `memtui preview` and the hook need to answer a query, saved by
the process that last loaded the memories and checked, not trusted, by the next one.

It holds, per layer and in a file of its own, the injection engine's own `LayerIndex` state
(entries in base order, term postings, each entry's one-line text with redaction applied,
its cost and what a candidate shows of it), so a warm run reads three files instead of
parsing Markdown, turning rows into entries and redacting every line. Beside it, in a section
read only by the TUI, the order its pane lists the layer in (`pane_order.pane_state`), so the
pane lists tens of thousands of entries making only those it shows. It is derived and
rebuildable: it lives in `<home>/cache/`, never in a workspace. A layer is rebuilt whole on
any doubt about it:

- another format, Python or memtui code (the stamp of memtui's core sources);
- other `maxItemChars` or `redactSecrets` settings (the lines depend on them);
- a damaged file (every part is checked against its CRC-32 when first read);
- memtui's change counter over muse.db's conversation rows missing (its triggers dropped),
  or what changed since it was saved not fully in memtui's change log.

What changed since it was saved is otherwise taken in, never rebuilt:

- a Markdown file added, removed, or with another size, mtime or inode (a file that had
  changed within a few seconds of being read is hashed again: a same-size edit within one
  mtime tick keeps size and mtime) is parsed again alone, its entries spliced into the saved
  layer (`patched_layer.splice`: the other entries keep their saved lines, JSON and postings)
  and the layer's file saved again;
- conversation rows added, changed or deleted by any writer since (memtui's change log,
  `generation`, names them) are read alone and laid over the saved layer
  (`patched_layer.PatchedLayer`), which stays as saved until they are many
  (`REBASE_ROWS`); then they are spliced in and the layer saved again.

The parts, one job each: `saved_file` (the file format), `saved_layer` (one layer's file:
saved, opened), `current_layers` (a saved layer brought up to date), `build_layers` (layers
built from the memories and saved), `aside` (built in a child process). This module puts
them together.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from ..injection import LayerCandidates
from ..model import LAYERS, Layer
from ..paths import Paths, Problem
from ..settings import Settings
from . import rows as row_changes
from .aside import start_aside, wait_aside
from .build_layers import build_layers
from .current_layers import current_layers, files_now, saved_conversation
from .layer_index import LayerIndex
from .saved_file import DamagedPreparedIndex
from .saved_layer import cache_name, cache_path, check_rows, open_layer, saved_indexes

# what other modules import from here: the prepared index's public names
__all__ = ["DamagedPreparedIndex", "Prepared", "cache_name", "cache_path", "check_rows", "load_prepared", "open_prepared",
           "prepare", "saved_conversation", "saved_indexes"]

log = logging.getLogger("memtui.prepared")


@dataclass
class Prepared:
    indexes: dict[str, LayerCandidates]
    problems: list[Problem]
    failed_layers: frozenset[str]
    # what the layers are, exactly, when all of them are saved state (files and, for rows laid
    # over a saved layer, the change counter): §13 keeps each layer's vectors beside it
    stamp: str | None = field(default=None)

    @property
    def row_gen(self) -> int | None:
        """memtui's change counter over the conversation rows (`rows.generation`) that the
        conversation layer is exactly current at, when known: a store loading behind the
        prepared index takes the layer's entries as they are while it has not moved."""
        gen = getattr(self.indexes.get(Layer.CONVERSATION), "row_gen", None)
        return gen if isinstance(gen, int) and Layer.CONVERSATION not in self.failed_layers else None

    @classmethod
    def of(cls, layers: Mapping[str, tuple[LayerCandidates, list[Problem]]], failed: frozenset[str] = frozenset(),
           stamp: str | None = None) -> Prepared:
        """From each layer's index and problems."""
        indexes = {str(layer): layers[layer][0] for layer in LAYERS}
        problems = sorted({p for layer in LAYERS for p in layers[layer][1]}, key=lambda p: (p.source, p.message))
        return cls(indexes, problems, failed, stamp)



def open_prepared(paths: Paths, settings: Settings, spawn: bool = False) -> Prepared:
    """The saved state brought up to date, the layers that cannot be rebuilt alone (`spawn`:
    as `prepare`'s).

    While another writer holds muse.db so that it cannot be read (SPEC §8, "a locked database
    costs the prompt nothing"), the conversation layer is left out at once, said in the
    problems, and the Markdown layers answer as usual; nothing waits on the lock."""
    if row_changes.locked(paths.db_path):
        layers = current_layers(paths, settings, layers=(Layer.USER, Layer.PROJECT))
        problem = Problem(str(paths.db_path), "conversation memories unavailable: the database is locked by another "
                                              "writer, so they were left out rather than waited for")
        have = {layer: (now[0], now[1]) for layer, now in layers.items()}
        have[Layer.CONVERSATION] = (LayerIndex.from_entries(Layer.CONVERSATION, []), [problem])
        prepared = prepare(paths, settings, have=have, spawn=spawn) if len(have) < len(LAYERS) else Prepared.of(have)
        return replace(prepared, failed_layers=prepared.failed_layers | {Layer.CONVERSATION}, stamp=None)
    layers = current_layers(paths, settings)
    if len(layers) == len(LAYERS):
        return _prepared(layers)
    return prepare(paths, settings, have={layer: (now[0], now[1]) for layer, now in layers.items()}, spawn=spawn)


def prepare(paths: Paths, settings: Settings, save: bool = True,
            have: Mapping[str, tuple[LayerCandidates, list[Problem]]] | None = None, spawn: bool = False) -> Prepared:
    """The layers not in `have` loaded from the memories (the store, read-only) and indexed;
    each saved for the next process when everything it was built from can be checked later.
    The layers in `have` are taken as they are.

    When the conversation layer and a Markdown layer are both missing (a first run), a child
    process builds and saves the Markdown layers while this one builds the conversation
    layer (the two share nothing); they are then opened as any saved layer is, checked
    against their files. Whatever the child did not save is built here. The child is forked
    from a process without other threads; from one with threads (the TUI's), only with
    `spawn`, as a new interpreter (which pays for its imports, ≈0.3 s, beside this one: only
    for a muse.db of `SPAWN_DB_BYTES` or more)."""
    have = dict(have or {})
    missing: list[str] = [str(layer) for layer in LAYERS if layer not in have]
    aside = [layer for layer in missing if layer != Layer.CONVERSATION]
    child = None
    if save and paths.home.is_dir() and Layer.CONVERSATION in missing and aside:
        child = start_aside(paths, settings, aside, spawn)
    layers: dict[str, tuple[LayerCandidates, list[Problem]]] = dict(have)
    if child is None:
        built, failed = build_layers(paths, settings, save, missing)
        layers.update(built)
        return Prepared.of(layers, failed)
    try:
        built, failed = build_layers(paths, settings, save, [str(Layer.CONVERSATION)])
    finally:
        wait_aside(child)
    if Layer.CONVERSATION in failed and _locked_out(built[Layer.CONVERSATION][1]):
        # the child, opening muse.db beside this one (a fresh database turned to WAL, its
        # tables made), can hold it longer than the wait: once it is gone, read the rows again
        built, failed = build_layers(paths, settings, save, [str(Layer.CONVERSATION)])
    layers.update(built)
    read_ns = time.time_ns()
    for layer in aside:
        saved = open_layer(paths, settings, layer)
        now = None
        if saved is not None:
            try:
                now = files_now(paths, settings, layer, saved, read_ns)
            except (DamagedPreparedIndex, OSError, KeyError, ValueError, TypeError, IndexError, EOFError) as exc:
                log.info("prepared %s layer not used: %s", layer, exc)
            if now is None:
                saved.close()
        if now is None:  # not saved by the child (a bad file just changed, an error): built here
            alone, failed_alone = build_layers(paths, settings, save, [layer])
            layers.update(alone)
            failed |= failed_alone
        else:
            layers[layer] = (now[0], now[1])
    return Prepared.of(layers, failed)


def _locked_out(problems: Sequence[Problem]) -> bool:
    return any("locked" in p.message or "busy" in p.message for p in problems)


def load_prepared(paths: Paths, settings: Settings, sources: bool = True) -> Prepared | None:
    """The saved state brought up to date with what changed since (see the module's notes),
    or None when a layer has to be rebuilt whole. With `sources` False, the files and rows it
    was built from are not checked: only for what depends on nothing else (a line depends on
    its text and the settings alone)."""
    layers = current_layers(paths, settings, sources)
    if len(layers) != len(LAYERS):
        return None
    return _prepared(layers)



def _prepared(layers: Mapping[str, tuple[LayerCandidates, list[Problem], str | None]],
              failed: frozenset[str] = frozenset()) -> Prepared:
    stamps = [layers[layer][2] for layer in LAYERS]
    stamp = None if any(s is None for s in stamps) else "|".join(stamps)  # type: ignore[arg-type]
    return Prepared.of({layer: (layers[layer][0], layers[layer][1]) for layer in LAYERS}, failed, stamp)

