"""MemoryStore: the three layers loaded into plain entries, kept in sync with the files and
muse.db, and the only way memtui changes a memory (atomic, checked, trashed, undoable)."""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Callable, Iterable

from . import markdown as md
from .database import ConversationRow, DatabaseError, MuseDB, now_ms
from .fileio import ConflictError, atomic_write_bytes, read_if_exists, sha256
from .models import Entry
from .paths import FILE_LAYERS, MAX_FILE_BYTES, Paths, Problem, UnsafePathError, is_inside, relative_posix
from .relevance import entry_terms
from .trash import Trash, TrashFile, TrashOp, new_op_id

log = logging.getLogger("memtui.store")

_TEMP_FILE = re.compile(r"^\..+\.md\.[A-Za-z0-9_]{6,}\.tmp$")  # fileio.atomic_write_bytes's temp names
DUPLICATE_SCORE = 90.0  # rapidfuzz ratio at or above which `remember` sees a near-duplicate


CACHE_VERSION = 3  # bump when entry splitting, fields or terms change


@dataclass
class FileRecord:
    path: Path
    layer: str
    rel: str
    size: int
    mtime_ns: int
    sha: str
    data: bytes
    entries: tuple[Entry, ...]
    payload: str  # the parsed entries as cached in the index
    _parsed: md.ParsedFile | None = None
    cached: bool = False  # served from the index's cache (so the cache is current)

    @property
    def parsed(self) -> md.ParsedFile:
        """The file's structure, for splicing; parsed on first use (loads may come from the cache)."""
        if self._parsed is None:
            self._parsed = md.parse_text(self.data.decode("utf-8"))
        return self._parsed


@dataclass(frozen=True)
class StoreChange:
    """Posted to listeners after the store's content changed."""

    layers: frozenset[str]
    paths: tuple[str, ...] = ()
    reason: str = "reload"  # reload | write | undo


@dataclass
class LoadReport:
    problems: list[Problem] = field(default_factory=list)
    layer_errors: dict[str, Problem] = field(default_factory=dict)


def _importance(meta: dict) -> str:
    value = meta.get("importance")
    return value if value in ("high", "low") else "normal"


def _status(meta: dict) -> str:
    return "archived" if meta.get("status") in ("archived", "superseded") else "active"


def file_fields(meta: dict) -> dict:
    """The frontmatter fields every entry of a file shares (`updated_at` None: use the mtime)."""
    return {
        "category": md.text_field(meta, "type"), "tags": list(md.tags_of(meta)),
        "source": md.text_field(meta, "source"), "importance": _importance(meta), "status": _status(meta),
        "raw_status": md.text_field(meta, "status"), "name": md.text_field(meta, "name"),
        "description": md.text_field(meta, "description"), "updated_at": md.frontmatter_updated_at(meta),
    }


def make_payload(layer: str, path: Path, parsed: md.ParsedFile) -> str:
    """A file's entries with their ids and terms, as cached in the index (keyed by path + hash)."""
    fields = file_fields(parsed.meta)
    tags = fields["tags"]
    seen: dict[str, int] = {}
    entries = []
    for raw in parsed.entries:
        k = seen.get(raw.text, 0)
        seen[raw.text] = k + 1
        entries.append([md.entry_id(layer, str(path), raw.text, k), raw.text, raw.section, raw.line_start,
                        raw.line_end, raw.kind,
                        sorted(entry_terms(raw.text, raw.section, fields["name"], fields["description"], tags))])
    return json.dumps({"v": CACHE_VERSION, "layer": layer, "fields": fields, "entries": entries}, ensure_ascii=False)


def entries_from_payload(layer: str, path: Path, rel: str, payload: str, mtime: float) -> tuple[Entry, ...] | None:
    data = json.loads(payload)
    if data.get("v") != CACHE_VERSION or data.get("layer") != layer:
        return None
    f = data["fields"]
    common = dict(
        layer=layer, category=f["category"], tags=tuple(f["tags"]), source=f["source"],
        importance=f["importance"], status=f["status"], raw_status=f["raw_status"], name=f["name"],
        description=f["description"], updated_at=mtime if f["updated_at"] is None else f["updated_at"],
        path=path, rel_path=rel,
    )
    return tuple(Entry(id=entry_id, text=text, section=section, line_start=start, line_end=end, kind=kind,
                       terms=frozenset(terms), **common)
                 for entry_id, text, section, start, end, kind, terms in data["entries"])


def conversation_entry(row: ConversationRow) -> Entry:
    return Entry(
        id=row.id, layer="conversation", text=row.content, category=row.category, tags=row.tags,
        source=row.source, updated_at=row.updated_at / 1000.0, conversation_id=row.conversation_id,
        conversation_title=row.conversation_title, terms=entry_terms(row.content, tags=row.tags),
    )


def normalise_for_duplicates(text: str) -> str:
    return " ".join(text.casefold().split())


class MemoryStore:
    """All memories of one home + workspace. Thread-safe: readers get immutable snapshots."""

    def __init__(self, paths: Paths, index: bool = True):
        self.paths = paths
        self.index = index
        self.db = MuseDB(paths.db_path)
        self.trash = Trash([paths.user_root, paths.project_root])
        self._lock = threading.RLock()
        self._files: dict[Path, FileRecord] = {}
        self._file_problems: dict[str, Problem] = {}
        self._problem_files: dict[Path, str] = {}
        self._problem_stats: dict[Path, tuple[int, int]] = {}
        self._walk_problems: dict[str, list[Problem]] = {}
        self._conversation: tuple[Entry, ...] = ()
        self._conversation_rows: dict[str, ConversationRow] = {}
        self._layer_errors: dict[str, Problem] = {}
        self._index_problem: Problem | None = None
        self._data_version: int | None = None
        self._listeners: list[Callable[[StoreChange], None]] = []
        self._by_id: dict[str, Entry] = {}
        self._layers: dict[str, tuple[Entry, ...]] = {"user": (), "project": (), "conversation": ()}
        self.loaded = False

    # ------------------------------------------------------------------ listeners
    def subscribe(self, callback: Callable[[StoreChange], None]) -> Callable[[], None]:
        self._listeners.append(callback)
        return lambda: self._listeners.remove(callback) if callback in self._listeners else None

    def _emit(self, change: StoreChange) -> None:
        for callback in list(self._listeners):
            try:
                callback(change)
            except Exception:  # a listener's bug must not break the store
                log.exception("store listener failed")

    # ------------------------------------------------------------------ reading
    def entries(self, layer: str | None = None) -> list[Entry]:
        """A copy of the current entries. Lock-free: the layers are immutable tuples replaced
        whole by a reload, so the UI never waits for one to finish."""
        layers = self._layers
        if layer is None:
            return [e for name in ("user", "project", "conversation") for e in layers[name]]
        return list(layers[layer])

    def snapshot(self, layer: str) -> tuple[Entry, ...]:
        """The layer's entries as an immutable tuple (the same object until the layer changes)."""
        return self._layers[layer]

    def get(self, entry_id: str) -> Entry | None:
        return self._by_id.get(entry_id)

    @property
    def problems(self) -> list[Problem]:
        with self._lock:
            found = list(self._file_problems.values())
            for layer in FILE_LAYERS:
                found += self._walk_problems.get(layer, [])
            found += list(self._layer_errors.values())
            if self._index_problem:
                found.append(self._index_problem)
            return sorted(set(found), key=lambda p: (p.source, p.message))

    @property
    def layer_errors(self) -> dict[str, Problem]:
        return dict(self._layer_errors)

    def file_record(self, path: Path) -> FileRecord | None:
        return self._files.get(path)

    # ------------------------------------------------------------------ loading
    def load(self) -> StoreChange:
        change = self.reload(full=True)
        self.loaded = True
        if self.index:
            self._remove_stale_temp_files()
        return change

    STALE_TEMP_SECONDS = 3600

    def _remove_stale_temp_files(self) -> None:
        """Temp files of atomic writes that a killed process left behind (`.name.md.xxxx.tmp`,
        never read as memories) are removed once they are an hour old."""
        cutoff = time.time() - self.STALE_TEMP_SECONDS
        for root in (self.paths.user_root, self.paths.project_root):
            if not root.is_dir():
                continue
            for folder, dirs, files in os.walk(root):
                dirs[:] = [d for d in dirs if not d.startswith(".")]
                for name in files:
                    if _TEMP_FILE.match(name):
                        path = Path(folder) / name
                        try:
                            if path.lstat().st_mtime < cutoff:
                                path.unlink()
                        except OSError:
                            pass

    def reload(self, changed: Iterable[Path] | None = None, conversation: bool | None = None,
               full: bool = False, reason: str = "reload", files: bool = True) -> StoreChange:
        """Bring the store up to date. Files are re-read only when their size or mtime
        changed (or they are named in `changed`); the conversation layer is re-read when
        `conversation` is true, or, when None, when muse.db's data_version moved."""
        changed_set = {Path(p) for p in (changed or ())}
        with self._lock:
            touched_layers: set[str] = set()
            touched_paths: list[str] = []
            cache = self.db.file_cache() if full else None  # parsed entries by path + content hash
            for layer in FILE_LAYERS if files or full else ():
                if self._reload_layer(layer, changed_set, full, touched_paths, cache):
                    touched_layers.add(layer)
            if conversation is None:
                conversation = full or self._database_moved()
            if conversation and self._reload_conversation():
                touched_layers.add("conversation")
            if touched_layers:
                self._rebuild_views()
        change = StoreChange(frozenset(touched_layers), tuple(touched_paths), reason)
        if touched_layers:
            self._emit(change)
        return change

    def _reload_layer(self, layer: str, changed: set[Path], full: bool, touched: list[str],
                      cache: dict[str, tuple[str, str]] | None) -> bool:
        root = self.paths.root(layer)
        files, walk_problems = self.paths.memory_files(layer)
        dirty = walk_problems != self._walk_problems.get(layer, [])
        root_problem = next((p for p in walk_problems if p.source == str(root)), None)
        if root_problem is not None:
            self._layer_errors[layer] = root_problem
        else:
            self._layer_errors.pop(layer, None)
        self._walk_problems[layer] = walk_problems
        current = set(files)
        for old in [p for p, rec in self._files.items() if rec.layer == layer and p not in current]:
            del self._files[old]
            touched.append(str(old))
            dirty = True
        for old in [p for p, layer_of in self._problem_files.items() if layer_of == layer and p not in current]:
            self._forget_problem(old)
            dirty = True
        reindex: list[FileRecord] = []
        for path in files:
            rec = self._files.get(path)
            try:
                st = path.stat()
            except OSError as exc:
                dirty |= self._set_file_problem(layer, path, f"cannot read: {exc.strerror or exc}", None)
                if self._files.pop(path, None) is not None:
                    touched.append(str(path))
                continue
            stat_key = (st.st_size, st.st_mtime_ns)
            if not full and path not in changed:
                if rec is not None and (rec.size, rec.mtime_ns) == stat_key:
                    continue
                if rec is None and self._problem_stats.get(path) == stat_key:
                    continue  # still the same bad file: already reported
            new = self._read_file(layer, root, path, st, cache)
            if new is None:
                dirty = True
                if self._files.pop(path, None) is not None:
                    touched.append(str(path))
                continue
            if path in self._problem_files:
                self._forget_problem(path)
                dirty = True
            self._files[path] = new
            if rec is not None and rec.sha == new.sha and rec.entries == new.entries:
                continue  # touched but unchanged (e.g. `touch`): nothing to tell
            touched.append(str(path))
            reindex.append(new)
            dirty = True
        if self.index:
            self._sync_index(layer, root, reindex, full)
        return dirty

    def _set_file_problem(self, layer: str, path: Path, message: str, stat: tuple[int, int] | None) -> bool:
        problem = Problem(str(path), message)
        changed = self._file_problems.get(str(path)) != problem
        self._file_problems[str(path)] = problem
        self._problem_files[path] = layer
        if stat is None:
            self._problem_stats.pop(path, None)
        else:
            self._problem_stats[path] = stat
        return changed

    def _forget_problem(self, path: Path) -> None:
        self._file_problems.pop(str(path), None)
        self._problem_files.pop(path, None)
        self._problem_stats.pop(path, None)

    def _read_file(self, layer: str, root: Path, path: Path, st: os.stat_result,
                   cache: dict[str, tuple[str, str]] | None = None) -> FileRecord | None:
        stat_key = (st.st_size, st.st_mtime_ns)
        if st.st_size > MAX_FILE_BYTES:
            self._set_file_problem(layer, path, f"file is {st.st_size} bytes, over the 1 MiB limit; skipped", stat_key)
            return None
        try:
            data = path.read_bytes()
        except OSError as exc:
            self._set_file_problem(layer, path, f"cannot read: {exc.strerror or exc}", None)
            return None
        if len(data) > MAX_FILE_BYTES:
            self._set_file_problem(layer, path, f"file is {len(data)} bytes, over the 1 MiB limit; skipped", None)
            return None
        sha = sha256(data)
        rel = relative_posix(path, root)
        cached = cache.get(str(path)) if cache else None
        if cached is not None and cached[0] == sha:
            entries = entries_from_payload(layer, path, rel, cached[1], st.st_mtime)
            if entries is not None:
                return FileRecord(path, layer, rel, st.st_size, st.st_mtime_ns, sha, data, entries, cached[1], cached=True)
        try:
            text = md.decode(data)
            if "\x00" in text:
                raise md.MemoryFileError("looks binary (contains NUL bytes)")
            parsed = md.parse_text(text)
        except md.MemoryFileError as exc:
            self._set_file_problem(layer, path, f"{exc}; skipped, not rewritten", stat_key)
            return None
        payload = make_payload(layer, path, parsed)
        entries = entries_from_payload(layer, path, rel, payload, st.st_mtime)
        return FileRecord(path, layer, rel, st.st_size, st.st_mtime_ns, sha, data, entries, payload, parsed)

    def _database_moved(self) -> bool:
        try:
            version = self.db.data_version() if self.db.exists() else None
        except (DatabaseError, FileNotFoundError, Exception):  # corrupt or vanished: re-read reports it
            return True
        moved = version != self._data_version
        self._data_version = version
        return moved

    def _reload_conversation(self) -> bool:
        try:
            rows = self.db.conversation_rows(self.paths.workspace)
        except DatabaseError as exc:
            problem = Problem(str(self.paths.db_path), f"conversation memories unavailable: {exc}")
            changed = self._layer_errors.get("conversation") != problem or bool(self._conversation)
            self._layer_errors["conversation"] = problem
            self._conversation = ()
            self._conversation_rows = {}
            return changed
        self._layer_errors.pop("conversation", None)
        try:
            self._data_version = self.db.data_version() if self.db.exists() else None
        except Exception:
            self._data_version = None
        by_id = {r.id: r for r in rows}
        if by_id == self._conversation_rows and self.loaded:
            return False
        self._conversation_rows = by_id
        self._conversation = tuple(conversation_entry(r) for r in rows)
        return True

    def _rebuild_views(self) -> None:
        layers: dict[str, list[Entry]] = {"user": [], "project": []}
        for path in sorted(self._files, key=lambda p: self._files[p].rel):
            rec = self._files[path]
            layers[rec.layer].extend(rec.entries)
        new = {"user": tuple(layers["user"]), "project": tuple(layers["project"]), "conversation": self._conversation}
        self._by_id = {e.id: e for name in new for e in new[name]}
        self._layers = new  # one assignment: readers see the old snapshot or the new one

    # ------------------------------------------------------------------ index (derived rows)
    def _sync_index(self, layer: str, root: Path, reindex: list[FileRecord], full: bool) -> None:
        try:
            known = self.db.indexed_files()
            prefix = str(root) + os.sep
            stale = [p for p in known if p.startswith(prefix) and Path(p) not in self._files]
            if stale:
                self.db.unindex_files(stale)
            if full:
                reindex = [r for r in self._files.values()
                           if r.layer == layer and (known.get(str(r.path)) != r.sha or not r.cached)]
            for rec in reindex:
                self.db.index_file(layer, rec.path, (rec.size, rec.mtime_ns, rec.sha), self._index_rows(rec), rec.payload)
            self._index_problem = None
        except Exception as exc:  # the index is derived: report, never fail the load
            self._index_problem = Problem(str(self.paths.db_path), f"search index not updated: {exc}")

    @staticmethod
    def _index_rows(rec: FileRecord) -> list[dict]:
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

    # ------------------------------------------------------------------ writing: files
    def _write_files(self, action: str, summary: str, writes: dict[Path, bytes | None],
                     expected: dict[Path, bytes | None], rows_before: list[dict] | None = None) -> TrashOp:
        """Write (or, with None, remove) files after saving their previous versions to the
        trash of their memory root. Every file must still hold `expected`."""
        for path, before in expected.items():
            if read_if_exists(path) != before:
                raise ConflictError(f"{path} changed on disk since it was read; not overwritten")
        op_id = new_op_id()
        ops: list[TrashOp] = []
        by_root: dict[Path, list[Path]] = {}
        for path in writes:
            root = self.paths.user_root if is_inside(path, self.paths.user_root) else self.paths.project_root
            by_root.setdefault(root, []).append(path)
        if rows_before and not by_root:
            by_root[self.paths.user_root] = []
        stamp = time.time()
        for root, paths in by_root.items():
            op = TrashOp(op_id, stamp, action, summary)
            for path in paths:
                data = writes[path]
                op.files.append(TrashFile(str(path), None, None if data is None else sha256(data)))
            if rows_before and root == next(iter(by_root)):
                op.rows = rows_before
            self.trash.save(root, op, {str(p): expected[p] for p in paths})
            ops.append(op)
        for path, data in writes.items():
            if data is None:
                os.unlink(path)
            else:
                atomic_write_bytes(path, data, expected=expected[path])
        return ops[0] if ops else TrashOp(op_id, stamp, action, summary)

    def _raw_entry(self, rec: FileRecord, entry: Entry) -> md.RawEntry:
        for raw in rec.parsed.entries:
            if raw.line_start == entry.line_start and raw.text == entry.text:
                return raw
        raise ConflictError(f"{rec.path}: the entry is no longer where it was; reload and try again")

    def _record_for(self, entry: Entry) -> FileRecord:
        with self._lock:
            rec = self._files.get(entry.path) if entry.path else None
            if rec is None or entry.id not in {e.id for e in rec.entries}:
                raise ConflictError(f"{entry.path}: the entry no longer exists; reload and try again")
            return rec

    def edit_entry(self, entry: Entry, new_text: str) -> Entry | None:
        """Replace one entry's text. Markdown: only its lines change (and `updatedAt`)."""
        new_text = new_text.strip()
        if not new_text:
            raise ValueError("an entry cannot be empty; delete it instead")
        if new_text == entry.text:
            return entry
        if entry.layer == "conversation":
            row = self.db.get_memory_row(entry.id)
            if row is None:
                raise ConflictError(f"conversation memory {entry.id} was deleted by another writer")
            if row["updated_at"] != int(round(entry.updated_at * 1000)) or row["content"] != entry.text:
                raise ConflictError(f"conversation memory {entry.id} was changed by another writer; not overwritten")
            self._write_files("edit", f"edit conversation memory {entry.id}", {}, {}, rows_before=[row])
            if not self.db.update_conversation_memory(entry.id, new_text, row["updated_at"]):
                raise ConflictError(f"conversation memory {entry.id} was changed by another writer; not overwritten")
            self.reload(conversation=True, reason="write")
            return self._find_conversation(entry.id)
        rec = self._record_for(entry)
        raw = self._raw_entry(rec, entry)
        new_data = md.replace_entry(rec.parsed, raw, new_text, date.today()).encode("utf-8")
        self._write_files("edit", f"edit {rec.rel}:{entry.line}", {rec.path: new_data}, {rec.path: rec.data})
        self.reload(changed=[rec.path], conversation=False, reason="write")
        return self._entry_at(rec.path, entry.line_start)

    def delete_entries(self, entries: Iterable[Entry]) -> TrashOp | None:
        """Delete entries (several per file at once); undoable with `undo_last`."""
        entries = list(entries)
        if not entries:
            return None
        by_file: dict[Path, list[Entry]] = {}
        rows: list[dict] = []
        conversation_ids: list[str] = []
        for e in entries:
            if e.layer == "conversation":
                row = self.db.get_memory_row(e.id)
                if row is None:
                    continue
                rows.append(row)
                conversation_ids.append(e.id)
            else:
                by_file.setdefault(e.path, []).append(e)
        writes: dict[Path, bytes | None] = {}
        expected: dict[Path, bytes | None] = {}
        today = date.today()
        for path, group in by_file.items():
            rec = self._record_for(group[0])
            parsed = rec.parsed
            text = rec.data.decode("utf-8")
            for e in sorted(group, key=lambda x: x.line_start, reverse=True):
                raw = self._raw_entry(rec, e)
                text = md.delete_entry(parsed, raw, today)
                parsed = md.ParsedFile(text, parsed.meta, md.split_lines(text), parsed.frontmatter_lines,
                                       parsed.body_line, parsed.entries)
            writes[path] = text.encode("utf-8")
            expected[path] = rec.data
        summary = _summary("delete", entries)
        op = self._write_files("delete", summary, writes, expected, rows_before=rows or None)
        for memory_id in conversation_ids:
            self.db.delete_memory(memory_id)
        self.reload(changed=list(writes), conversation=bool(rows), reason="write")
        return op

    def create_entry(self, layer: str, text: str, category: str = "", tags: Iterable[str] = (),
                     conversation_id: str | None = None) -> Entry | None:
        text = text.strip()
        if not text:
            raise ValueError("a memory cannot be empty")
        tags = [t for t in tags if t]
        if layer == "conversation":
            if conversation_id is None:
                conversation_id = self.workspace_conversation_id()
                self.db.ensure_conversation(conversation_id, "Added in memtui", str(self.paths.workspace))
            memory_id = self.db.add_conversation_memory(text, category or "knowledge", tags, conversation_id)
            self.reload(conversation=True, reason="write")
            return self._find_conversation(memory_id)
        path = self.paths.default_file(layer)
        try:
            self.paths.writable_root(layer)
        except UnsafePathError as exc:
            raise ConflictError(str(exc)) from None
        with self._lock:
            rec = self._files.get(path)
        if rec is None and path.exists():
            problem = self._file_problems.get(str(path))
            reason = problem.message if problem else "it could not be read"
            raise ConflictError(f"{path} exists but is not usable as memory ({reason}); not touched")
        today = date.today()
        if rec is None:
            data = md.append_item(None, text, today, md.new_file_header(category, tags, today)).encode("utf-8")
            expected = None
        else:
            data = md.append_item(rec.parsed, text, today).encode("utf-8")
            expected = rec.data
        self._write_files("create", f"add to {path.name}", {path: data}, {path: expected})
        self.reload(changed=[path], conversation=False, reason="write")
        with self._lock:
            new = self._files.get(path)
        return new.entries[-1] if new and new.entries else None

    def workspace_conversation_id(self) -> str:
        import hashlib

        return "memtui-" + hashlib.sha1(str(self.paths.workspace).encode()).hexdigest()[:12]

    def undo_last(self) -> TrashOp | None:
        """Undo the most recent change memtui made (any layer), restoring exact bytes."""
        parts = self.trash.last()
        if not parts:
            return None
        for op in parts:
            self.trash.check_restorable(op)
        restored: list[Path] = []
        rows = []
        for op in parts:
            restored += self.trash.restore_files(op)
            rows += op.rows
        for row in rows:
            if parts[0].action == "create":
                self.db.delete_memory(row["id"])
            else:
                self.db.restore_memory_row(row)
        for op in parts:
            op.undone = True
            self.trash.write_manifest(op)
        self.reload(changed=restored, conversation=bool(rows), reason="undo")
        return parts[0]

    # ------------------------------------------------------------------ helpers
    def _find_conversation(self, memory_id: str) -> Entry | None:
        return next((e for e in self._conversation if e.id == memory_id), None)

    def _entry_at(self, path: Path, line_start: int) -> Entry | None:
        rec = self._files.get(path)
        if rec is None:
            return None
        return next((e for e in rec.entries if e.line_start == line_start), None)

    def find_similar(self, layer: str, text: str) -> Entry | None:
        """An entry of `layer` that is a near-duplicate of `text` (rapidfuzz ratio >= 90)."""
        from rapidfuzz import fuzz, process  # only `remember` needs it

        pool = self.entries(layer)
        if not pool:
            return None
        choices = [normalise_for_duplicates(e.text) for e in pool]
        best = process.extractOne(normalise_for_duplicates(text), choices, scorer=fuzz.ratio,
                                  score_cutoff=DUPLICATE_SCORE)
        return pool[best[2]] if best else None

    def matching(self, keyword: str, layer: str | None = None) -> list[Entry]:
        """Entries whose text, section or tags contain `keyword` (case-insensitive)."""
        needle = keyword.casefold().strip()
        if not needle:
            return []
        out = []
        for e in self.entries(layer):
            hay = " ".join((e.text, e.section, " ".join(e.tags))).casefold()
            if needle in hay:
                out.append(e)
        return out

    def close(self) -> None:
        self.db.close()



def _summary(action: str, entries: list[Entry]) -> str:
    if len(entries) == 1:
        e = entries[0]
        return f"{action} {e.source_ref}"
    return f"{action} {len(entries)} memories"
