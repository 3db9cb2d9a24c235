"""Each saved layer brought up to date, or refused: what it was built from is checked (the
Markdown files' size, mtime and inode, a fresh one's hash; memtui's change counter over
the conversation rows), and what changed since is taken in (see `prepared`'s notes): a
changed file parsed again alone and spliced in, changed rows laid over the saved layer
(`PatchedLayer`) until they are many."""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..bounded_reader import read_regular
from ..fileio import sha256
from ..injection import LayerCandidates, LineMaker
from ..model import LAYERS, Layer
from ..paths import MAX_FILE_BYTES, Paths, Problem, memory_file_names
from ..settings import Settings
from . import rows as row_changes
from .entry_rows import PATH_AT
from .generation import LOG_KEPT
from .layer_index import LayerIndex
from .line_cache import LineCache
from .patched_layer import PatchedLayer, splice
from .saved_file import Chunks, DamagedPreparedIndex
from .saved_layer import FRESH_NS, SavedLayer, index_of, open_layer, save_layer

log = logging.getLogger("memtui.prepared")

REBASE_ROWS = 1_000  # changed conversation rows laid over the saved layer before it is saved again
_PROBLEM = 4  # in a file's saved state (`Scan.file_states`: size, mtime_ns, inode, sha256, problem)


def current_layers(paths: Paths, settings: Settings, sources: bool = True,
                   layers: tuple[str, ...] = LAYERS) -> dict[str, tuple[LayerCandidates, list[Problem], str | None]]:
    """Each layer (of `layers`) whose saved file, brought up to date, describes its memories
    exactly: (index, problems, stamp of exactly this state or None)."""
    read_ns = time.time_ns()  # before anything is looked at: a file changed after it is hashed next time
    found: dict[str, tuple[LayerCandidates, list[Problem], str | None]] = {}
    for layer in layers:
        saved = open_layer(paths, settings, layer)
        if saved is None:
            continue
        try:
            if not sources:
                now: tuple[LayerCandidates, list[Problem], str | None] | None = (saved.index, [], None)
            elif layer == Layer.CONVERSATION:
                now = rows_now(paths, settings, saved)
            else:
                now = files_now(paths, settings, layer, saved, read_ns)
        except DamagedPreparedIndex as exc:  # the file is removed: the layer is rebuilt
            log.info("%s", exc)
            now = None
        except (OSError, KeyError, ValueError, TypeError, IndexError, EOFError, sqlite3.Error) as exc:
            log.info("prepared %s layer not used: %s", layer, exc)
            now = None
        if now is None:
            saved.close()
        else:
            found[layer] = now
    return found


def rows_now(paths: Paths, settings: Settings,
              saved: SavedLayer) -> tuple[LayerCandidates, list[Problem], str | None] | None:
    """The conversation layer with the rows changed since it was saved taken in, or None."""
    since = saved.saved["info"]["gen"]
    if not isinstance(since, int):  # no rows then ("absent", "empty"): valid while still so
        return (saved.index, [], saved.stamp()) if row_changes.generation(paths.db_path) == since else None
    changes = row_changes.changes_since(paths.db_path, paths.workspace, since, LOG_KEPT)
    if changes is None:
        return None
    if not changes.ids:
        saved.index.row_gen = changes.gen
        return saved.index, [], saved.stamp()
    removed = saved.positions(changes.ids)
    added = LayerIndex.from_entries(Layer.CONVERSATION, [row_changes.conversation_entry(r) for r in changes.rows])
    if len(changes.ids) <= REBASE_ROWS:  # laid over the saved layer, which stays as it is
        patched = PatchedLayer(saved.index, removed, added)
        patched.row_gen = changes.gen
        return patched, [], f"{saved.stamp()}+{changes.gen}"
    # many: spliced in, and the layer saved again as of now
    maker = LineMaker(settings.max_item_chars, settings.redact_secrets)
    core, lists, postings = splice(saved.index, removed, added, maker)
    save_layer(paths, settings, Layer.CONVERSATION, core, lists, postings, {"gen": changes.gen})
    index = index_of(core, lists, postings)
    index.row_gen = changes.gen
    return index, [], None


def files_now(paths: Paths, settings: Settings, layer: str, saved: SavedLayer,
               read_ns: int) -> tuple[LayerCandidates, list[Problem], str | None] | None:
    """A Markdown layer with the files changed since it was saved parsed again and spliced in
    (and saved), or None when the layer's root cannot be read."""
    files, walk_problems = memory_file_names(paths.root(layer), within=paths.container(layer))  # paths.memory_files
    root = str(paths.root(layer))
    if any(p.source == root for p in walk_problems):
        return None  # a failed layer: the store reports it
    info = saved.saved["info"]
    states: dict[str, Any] = info["files"]
    fresh = info["read_ns"] - FRESH_NS
    changed: list[str] = []
    problems: list[Problem] = []
    for path in files:
        state = states.get(path)
        if state is None or not _unchanged(path, state, fresh):
            changed.append(path)
        elif state[_PROBLEM]:
            problems.append(Problem(path, state[_PROBLEM]))
    gone = set(changed)
    if len(states) != len(files) - sum(1 for name in changed if name not in states):  # a saved file is gone
        current = set(files)
        gone |= {name for name in states if name not in current}
    if not gone:
        return saved.index, problems + walk_problems, saved.stamp()
    from .scan import Scan

    scan = Scan({layer: paths.root(layer)}, within={layer: paths.container(layer)})
    records = scan.read_files(layer, [Path(name) for name in changed])
    read = scan.file_states(layer)
    base = saved.index
    if not isinstance(base.rows, Chunks):
        return None
    removed = [pos for pos, row in enumerate(base.rows.materialize()) if row[PATH_AT] in gone]
    maker = LineMaker(settings.max_item_chars, settings.redact_secrets)
    lines = LineCache()  # an edited file's other entries keep their saved lines: few are made (and redacted)
    base.seed_positions(lines, maker, removed)
    added = LayerIndex.from_entries(layer, [e for rec in records for e in rec.entries], lines)
    core, lists, postings = splice(base, removed, added, maker)
    kept = {name: state for name, state in states.items() if name not in gone}
    if read is not None:
        save_layer(paths, settings, layer, core, lists, postings, {"files": {**kept, **read}, "read_ns": read_ns})
    saved.close()
    problems += [p for p in scan.layer_problems(layer)]
    return index_of(core, lists, postings), problems + walk_problems, None


def _unchanged(path: str, state: Sequence[Any], fresh: int) -> bool:
    size, mtime_ns, ino, sha, _ = state
    try:
        st = os.stat(path)
    except OSError:
        return False
    if (st.st_size, st.st_mtime_ns, st.st_ino) != (size, mtime_ns, ino):
        return False
    # a write within one mtime tick, or one that put the mtime back, changes neither size
    # nor mtime, but always the ctime (which no one can set back): hashed again then
    if mtime_ns >= fresh or st.st_ctime_ns >= fresh:
        if not sha:
            return False
        try:
            return sha256(read_regular(path, MAX_FILE_BYTES)) == sha
        except OSError:
            return False
    return True



def saved_conversation(paths: Paths, settings: Settings) -> LayerCandidates | None:
    """The conversation layer as saved, with the rows changed since taken in (its `row_gen`
    the counter it is exactly current at); None when none is saved or it must be rebuilt.
    For a reader that wants the rows' entries without reading every row (the doctor)."""
    saved = open_layer(paths, settings, Layer.CONVERSATION)
    if saved is None:
        return None
    try:
        now = rows_now(paths, settings, saved)
    except (DamagedPreparedIndex, OSError, KeyError, ValueError, TypeError, IndexError, EOFError, sqlite3.Error) as exc:
        log.info("prepared conversation layer not used: %s", exc)
        now = None
    if now is None:
        saved.close()
        return None
    return now[0]

