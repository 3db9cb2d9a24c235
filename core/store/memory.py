"""MemoryStore: the three layers loaded into plain entries, kept in sync with the files and
muse.db, and the only way memtui changes a memory. It composes the store's parts, each with
one job: `scan` (files -> entries), `conversations` (Muse's rows in muse.db), `index`
(memtui's own tables there: the Markdown index, the review state), `edits` (checked writes,
the undo log) and `snapshot` (what readers get)."""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Any

from ..model import FILE_LAYERS, Entry, Layer
from ..paths import Paths, Problem
from . import rows as row_changes
from .conversations import ConversationRow, Conversations
from .database import Database, DatabaseError, now_ms
from .edits import ChangeLog
from .generation import LOG_KEPT
from .index import FileIndex, ReviewState
from .line_cache import LineCache
from .rows import conversation_entry
from .saved_rows import SavedEntries
from .scan import FileRecord, Scan
from .snapshot import Snapshot
from .writing import StoreWrites

log = logging.getLogger("memtui.store")

_TEMP_FILE = re.compile(r"^\..+\.md\.[A-Za-z0-9_]{6,}\.tmp$")  # fileio.atomic_write_bytes's temp names


@dataclass(frozen=True)
class StoreChange:
    """Posted to listeners after the store's content changed."""

    layers: frozenset[str]
    paths: tuple[str, ...] = ()
    reason: str = "reload"  # reload | write | undo


class MemoryStore(StoreWrites):
    """All memories of one home + workspace. Readers get immutable snapshots, lock-free;
    loads and writes hold the store's lock.

    A facade: the jobs themselves live in `scan`, `conversations`, `index`, `edits` and
    `snapshot`; what is
    here is the order in which they are called under one lock (read, index, publish a
    snapshot, tell listeners), which is why it is longer than a screen."""

    def __init__(self, paths: Paths, index: bool = True):
        self.paths = paths
        self.index = index
        self.database = Database(paths.db_path)  # one connection for its tables' two owners
        self.conversations = Conversations(self.database)
        self.file_index = FileIndex(self.database)
        self.review_state = ReviewState(self.database)
        self.log = ChangeLog(paths, self.database)
        self.scan = Scan({Layer.USER: paths.user_root, Layer.PROJECT: paths.project_root},
                         within={layer: paths.container(layer) for layer in FILE_LAYERS})
        self._lock = threading.RLock()
        self._conversation: Sequence[Entry] = ()  # a tuple, or the prepared index's rows (`SavedEntries`)
        # (`rows_from_prepared`) the conversation layer as the prepared index has it brought up
        # to date, and the least rows for which it is taken from there rather than read whole
        self._saved_rows: tuple[Callable[[], Any], int] | None = None
        self._conversation_error: Problem | None = None
        self._index_problem: Problem | None = None
        self._data_version: int | None = None
        # memtui's change counter over the rows (`Conversations.row_generation`) when the
        # conversation layer was read: a later reload takes in only the rows changed since
        self._row_gen: int | None = None
        self._offered: tuple[tuple[Entry, ...], int] | None = None  # see offer_conversation
        self._listeners: list[Callable[[StoreChange], object]] = []
        self._snapshot = Snapshot.empty()
        self.lines = LineCache()  # the injection engine's made lines and layer indexes for this store
        self.loaded = False

    # ------------------------------------------------------------------ listeners
    def subscribe(self, callback: Callable[[StoreChange], object]) -> Callable[[], None]:
        self._listeners.append(callback)
        return lambda: self._listeners.remove(callback) if callback in self._listeners else None

    def _emit(self, change: StoreChange) -> None:
        for callback in list(self._listeners):
            try:
                callback(change)
            except Exception:  # a listener's bug must not break the store
                log.exception("store listener failed")

    # ------------------------------------------------------------------ reading
    @property
    def current(self) -> Snapshot:
        """The current snapshot (immutable; replaced whole by a reload)."""
        return self._snapshot

    def entries(self, layer: str | None = None) -> list[Entry]:
        return self._snapshot.entries(layer)

    def snapshot(self, layer: str) -> Sequence[Entry]:
        """The layer's entries as an immutable tuple (the same object until the layer changes);
        a large conversation layer taken from the prepared index (`rows_from_prepared`) as a
        `SavedEntries`, whose entries are made as they are asked for."""
        return self._snapshot.layers[layer]

    def get(self, entry_id: str) -> Entry | None:
        return self._snapshot.get(entry_id)

    @property
    def problems(self) -> list[Problem]:
        with self._lock:
            found = self.scan.problems + list(self.layer_errors.values())
            if self._index_problem:
                found.append(self._index_problem)
            return sorted(set(found), key=lambda p: (p.source, p.message))

    @property
    def layer_errors(self) -> dict[str, Problem]:
        errors = dict(self.scan.layer_errors)
        if self._conversation_error is not None:
            errors[Layer.CONVERSATION] = self._conversation_error
        return errors

    @property
    def file_problems(self) -> list[Problem]:
        """The files that could not be memory, each with its reason (a consistent copy)."""
        with self._lock:
            return list(self.scan.problems)

    def problem_of(self, path: Path) -> Problem | None:
        """Why the memory file `path` is not read (None: it is, or it is not a memory file)."""
        with self._lock:
            return self.scan.problem_of(path)

    def file_hashes(self) -> dict[str, str]:
        """Every memory file's path and the sha256 of the content loaded (a consistent copy)."""
        with self._lock:
            return {str(p): rec.sha for p, rec in self.scan.files.items()}

    def file_records(self) -> list[FileRecord]:
        """Every memory file loaded, in a consistent copy (the jsonl backup reads them whole)."""
        with self._lock:
            return list(self.scan.files.values())

    def read_state(self) -> tuple[Any, ...] | None:
        """What this store read, to tell whether another reader (a doctor in its own process)
        saw the same memories: memtui's change counter over the rows, each memory file's
        stat, the problems met. None when the rows' counter is not known (then nobody can
        tell: they may differ)."""
        with self._lock:
            if self._row_gen is None and (self._conversation or self._conversation_error is not None):
                return None
            files = sorted((str(r.path), r.size, r.mtime_ns, r.ctime_ns, r.ino) for r in self.scan.files.values())
            problems = sorted((str(p.source), p.message) for p in self.problems)
            return (self._row_gen, tuple(files), tuple(problems))

    def file_record(self, path: Path) -> FileRecord | None:
        return self.scan.files.get(path)

    # ------------------------------------------------------------------ loading
    def load(self) -> StoreChange:
        change = self.reload(full=True)
        self.loaded = True
        if self.index:
            try:
                self.log.remove_stale_temp_files(
                    [(self.paths.root(layer), self.paths.container(layer)) for layer in FILE_LAYERS], _TEMP_FILE)
            except OSError as exc:
                log.warning("stale temp files not removed: %s", exc)
        return change

    def reload(self, changed: Iterable[Path] | None = None, conversation: bool | None = None,
               full: bool = False, reason: str = "reload", files: bool = True) -> StoreChange:
        """Bring the store up to date. Files are re-read only when their size or mtime
        changed (or they are named in `changed`); the conversation layer is re-read when
        `conversation` is true, or, when None, when muse.db's data_version moved."""
        changed_set = {Path(p) for p in (changed or ())}
        with self._lock:
            touched_layers: set[str] = set()
            touched_paths: list[str] = []
            cache = self._file_cache() if full else None
            for layer in FILE_LAYERS if files or full else ():
                dirty, reindex = self.scan.reload_layer(layer, changed_set, full, touched_paths, cache)
                if dirty:
                    touched_layers.add(layer)
                if self.index:
                    self._sync_index(layer, reindex, full)
            if conversation is None:
                conversation = full or self._database_moved()
            if conversation and self._reload_conversation(full):
                touched_layers.add(Layer.CONVERSATION)
            if touched_layers:
                self._snapshot = Snapshot.build(
                    {layer: tuple(self.scan.entries(layer)) for layer in FILE_LAYERS}, self._conversation)
        change = StoreChange(frozenset(touched_layers), tuple(touched_paths), reason)
        if touched_layers:
            self._emit(change)
        return change

    def load_layers(self, layers: Collection[str]) -> None:
        """Read only `layers`, the others stay empty (for a prepared index that lacks just
        those: one edited Markdown file does not re-read the conversation rows)."""
        with self._lock:
            cache = self._file_cache() if any(layer in layers for layer in FILE_LAYERS) else None
            for layer in FILE_LAYERS:
                if layer in layers:
                    self.scan.reload_layer(layer, set(), True, [], cache)
            if Layer.CONVERSATION in layers:
                self._reload_conversation(full=True)
            self._snapshot = Snapshot.build(
                {layer: tuple(self.scan.entries(layer)) for layer in FILE_LAYERS}, self._conversation)
            self.loaded = True

    def layer_problems(self, layer: str) -> list[Problem]:
        """What went wrong reading one layer (its files, its walk, or the layer as a whole)."""
        with self._lock:
            if layer == Layer.CONVERSATION:
                return [self._conversation_error] if self._conversation_error else []
            return self.scan.layer_problems(layer)

    def _file_cache(self) -> dict[str, tuple[str, str]]:
        if row_changes.locked(self.paths.db_path):  # another writer holds muse.db: parse, never wait on it
            return {}
        try:
            return self.file_index.cached()  # parsed entries by path + content hash
        except Exception as exc:  # a cache is never required
            log.warning("parse cache unavailable: %s", exc)
            return {}

    def _database_moved(self) -> bool:
        try:
            version = self.conversations.data_version() if self.database.exists() else None
        except Exception:  # corrupt or vanished: the re-read reports it
            return True
        moved = version != self._data_version
        self._data_version = version
        return moved

    def rows_from_prepared(self, layer_of: Callable[[], Any], least: int) -> None:
        """Take the conversation layer from the prepared index rather than reading every row
        into entries, when it has `least` rows or more: `layer_of()` gives it brought up to
        date (`prepared.saved_conversation`: the rows changed since laid over it, its
        `row_gen` the counter it is exactly current at), or None (then the rows are read)."""
        self._saved_rows = (layer_of, least)

    def _take_saved(self) -> bool | None:
        """The conversation layer from the prepared index (`rows_from_prepared`); whether it
        changed, or None when it cannot be taken from there (too small, none saved)."""
        if self._saved_rows is None or not self.database.exists():
            return None
        layer_of, least = self._saved_rows
        version = self.conversations.data_version()  # first: a commit after it moves it again
        layer = layer_of()
        gen = getattr(layer, "row_gen", None)
        if layer is None or not isinstance(gen, int) or layer.size < least:
            return None
        self._data_version = version
        current = self._conversation
        if isinstance(current, SavedEntries) and current.row_gen == gen and self._conversation_error is None:
            return False
        self._conversation = SavedEntries(layer, gen)
        self._row_gen = gen
        self._conversation_error = None
        return True

    def offer_conversation(self, entries: Iterable[Entry], row_gen: int) -> None:
        """The conversation layer's entries as another reader made them (the TUI, from the
        prepared index) when memtui's change counter over the rows was `row_gen`: the next
        load takes them instead of reading every row again, if the counter has not moved
        since (else it reads the rows as usual). They must be the rows' entries field for
        field (their terms may be left out, as the store leaves them out)."""
        self._offered = (tuple(entries), row_gen)

    def _reload_conversation(self, full: bool = False) -> bool:
        """Bring the conversation layer up to date; whether its entries changed. Taken, when
        memtui's change counter allows (its triggers in place), from entries offered or from
        the rows changed since the last read alone; else every row is read again."""
        offered, self._offered = self._offered, None
        if self._saved_rows is not None and offered is None:
            try:
                taken = self._take_saved()
            except Exception as exc:  # anything unsure: the rows are read below
                log.info("conversation layer not taken from the prepared index: %s", exc)
                taken = None
            if taken is not None:
                return taken
        if offered is not None or (not full and self.loaded and self._row_gen is not None):
            try:
                changed = self._conversation_since(offered)
            except Exception as exc:  # anything unsure: every row is read again below
                log.info("conversation rows read whole: %s", exc)
                changed = None
            if changed is not None:
                return changed
        try:
            gen = self.conversations.row_generation() if self.database.exists() else None
            rows = self.conversations.rows(self.paths.workspace)  # read after the counter: never older than it
        except (DatabaseError, Exception) as exc:  # the layer fails alone; the others still load
            problem = Problem(str(self.paths.db_path), f"conversation memories unavailable: {exc}")
            changed = self._conversation_error != problem or bool(self._conversation)
            self._conversation_error = problem
            self._conversation = ()
            self._row_gen = None
            return changed
        self._conversation_error = None
        self._row_gen = gen if isinstance(gen, int) else None
        try:
            self._data_version = self.conversations.data_version() if self.database.exists() else None
        except Exception:
            self._data_version = None
        if self.loaded and _same_rows(self._conversation, rows):
            return False
        self._conversation = _conversation_entries(rows)
        return True

    def _conversation_since(self, offered: tuple[tuple[Entry, ...], int] | None) -> bool | None:
        """The layer from the entries `offered` (as of a counter value) or patched with the
        rows changed since `_row_gen`, read from memtui's change log; None when that cannot be
        told exactly (no counter, the log trimmed, too many changes): then every row is read."""
        if not self.database.exists():
            return None
        version = self.conversations.data_version()  # first: a commit after it moves it again
        gen = self.conversations.row_generation()
        if not isinstance(gen, int):
            return None
        if offered is not None:
            if gen != offered[1]:
                return None
            self._conversation, self._row_gen, self._data_version = offered[0], gen, version
            self._conversation_error = None
            return True
        since = self._row_gen
        if since is None or self._conversation_error is not None:
            return None
        self._data_version = version
        if gen == since:  # muse.db moved (the hook's history), no row did
            return False
        changes = row_changes.changes_since(self.paths.db_path, self.paths.workspace, since, LOG_KEPT)
        if changes is None:
            return None
        self._row_gen = changes.gen
        if not changes.ids:  # a conversation of another workspace, or rows of others
            return False
        kept = [e for e in self._conversation if e.id not in changes.ids]
        self._conversation = (*kept, *_conversation_entries(list(changes.rows)))
        return True

    # ------------------------------------------------------------------ index (derived rows)
    def _sync_index(self, layer: str, reindex: list[FileRecord], full: bool) -> None:
        root = self.paths.root(layer)
        try:
            self.database.schema_ready()  # the index is kept here: its tables made (an older schema backed up first)
            known = self.file_index.indexed()
            prefix = str(root) + os.sep
            stale = [p for p in known if p.startswith(prefix) and Path(p) not in self.scan.files]
            if stale:
                self.file_index.remove(stale)
            if full:
                reindex = [r for r in self.scan.files.values()
                           if r.layer == layer and (known.get(str(r.path)) != r.sha or not r.cached)]
            for rec in reindex:
                self.file_index.put(layer, rec.path, (rec.size, rec.mtime_ns, rec.sha), _index_rows(rec), rec.payload)
            self._index_problem = None
        except Exception as exc:  # the index is derived: report, never fail the load
            self._index_problem = Problem(str(self.paths.db_path), f"search index not updated: {exc}")

    def rebuild_index(self) -> int:
        """Re-derive every Markdown row and the FTS index from the files, in place."""
        with self._lock:
            self.file_index.clear()
            self.reload(full=True)
            self.conversations.rebuild_fts()
            return sum(len(self.snapshot(layer)) for layer in FILE_LAYERS)

    # ------------------------------------------------------------------ helpers
    def entry_at(self, path: Path, line_start: int) -> Entry | None:
        """The entry that starts at `line_start` of `path` now, whatever its text: where an
        entry is found again by its place alone (after its own edit, or to show what an edit
        that met a conflict would overwrite). `markdown.find_entry` finds one by place and text."""
        rec = self.scan.files.get(path)
        if rec is None:
            return None
        return next((e for e in rec.entries if e.line_start == line_start), None)

    def close(self) -> None:
        self.database.close()


_ROW_FIELDS = attrgetter("id", "content", "category", "tags", "source", "conversation_id", "conversation_title")
_ENTRY_FIELDS = attrgetter("id", "text", "category", "tags", "source", "conversation_id", "conversation_title")


def _same_rows(entries: Sequence[Entry], rows: list[ConversationRow]) -> bool:
    """Whether `rows` would make exactly `entries` (`scan.conversation_entry`'s fields), in
    order: a change elsewhere in muse.db (the hook's injection history) re-reads the rows,
    and only a changed row makes the layer's entries again. Compared field by field from the
    entries themselves, so no second copy of every row is kept."""
    if len(entries) != len(rows):
        return False
    for e, r in zip(entries, rows, strict=True):
        if _ENTRY_FIELDS(e) != _ROW_FIELDS(r) or e.updated_at != r.updated_at / 1000.0:
            return False
    return True


def _conversation_entries(rows: list[ConversationRow]) -> tuple[Entry, ...]:
    """The rows' entries, without their terms (`relevance.terms_of` makes them when asked:
    the injection answers from the prepared index, or indexes a layer once), their repeated
    strings shared: a large workspace has tens of thousands of rows but far fewer
    conversations, and each value read from SQLite is a string of its own."""
    shared: dict[str, str] = {}
    share = shared.setdefault
    out = []
    for r in rows:
        e = conversation_entry(r, with_terms=False)
        # the entry is not published yet: its own fields, replaced by equal values
        for name in ("category", "source", "conversation_id", "conversation_title"):
            value = getattr(e, name)
            if value is not None:
                object.__setattr__(e, name, share(value, value))
        out.append(e)
    return tuple(out)


def _index_rows(rec: FileRecord) -> list[dict[str, object]]:
    stamp = now_ms()
    return [
        {
            "id": e.id, "type": e.layer, "category": e.category or "knowledge", "content": e.text,
            "tags": json.dumps(list(e.tags), ensure_ascii=False), "source": e.source or "manual",
            "conversation_id": None, "file_path": str(rec.path), "created_at": stamp,
            "updated_at": int(e.updated_at * 1000),
        }
        for e in rec.entries
    ]


