"""The store's writes (SPEC §8): edit, delete (planned, then applied as planned), create,
accept, flags and undo, each one change in the undo log (`edits.ChangeLog`), applied under
the store's lock and followed by a reload of what it touched. `MemoryStore` is made of its
reads and loads (`memory`) and these."""

from __future__ import annotations

import hashlib
import json
import threading
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from .. import gate
from .. import markdown as md
from ..bounded_reader import read_regular_if_exists
from ..display import path_text
from ..fileio import ConflictError, read_if_exists
from ..model import Entry, Layer
from ..paths import MAX_FILE_BYTES, Paths, UnsafePathError
from .changes import Change, FlagChange, ReviewChange, RowChange
from .conversations import Conversations
from .database import Database, now_ms
from .edits import ChangeLog
from .scan import FileRecord, Scan


@dataclass(frozen=True)
class PlannedDelete:
    """A delete worked out once, before it is confirmed and applied (`MemoryStore.plan_delete`):
    each file as it will be and as it must still be, the rows that go, and the files (root-
    relative) whose rest then reads as one memory, which the confirmation says (SPEC §2)."""

    entries: tuple[Entry, ...]
    writes: dict[Path, tuple[str, bytes | None]]
    expected: dict[Path, bytes | None]
    rows: list[RowChange]
    merged: tuple[str, ...]


class StoreWrites:
    """`MemoryStore`'s writes; the parts they use are the store's (declared here)."""

    paths: Paths
    database: Database
    conversations: Conversations
    log: ChangeLog
    scan: Scan
    _lock: threading.RLock

    if TYPE_CHECKING:
        def get(self, entry_id: str) -> Entry | None: ...
        def snapshot(self, layer: str) -> Sequence[Entry]: ...
        def entry_at(self, path: Path, line_start: int) -> Entry | None: ...
        def reload(self, changed: Iterable[Path] | None = None, conversation: bool | None = None,
                   full: bool = False, reason: str = "reload", files: bool = True) -> object: ...

    def _record_for(self, entry: Entry) -> FileRecord:
        with self._lock:
            rec = self.scan.files.get(entry.path) if entry.path else None
            if rec is None or entry.id not in {e.id for e in rec.entries}:
                raise ConflictError(f"{entry.path}: the entry no longer exists; reload and try again")
            return rec

    @staticmethod
    def _raw_entry(rec: FileRecord, entry: Entry) -> md.RawEntry:
        found = md.find_entry(rec.parsed, entry.line_start, entry.text)
        if found is not None:
            return rec.parsed.entries[found]
        raise ConflictError(f"{rec.path}: the entry is no longer where it was; reload and try again")

    def edit_entry(self, entry: Entry, new_text: str) -> Entry | None:
        """Replace one entry's text. Markdown: only its lines change (and `updatedAt`).
        Text with a NUL or another control character is refused (gate.TextRefused)."""
        new_text = gate.clean_text(new_text)
        if not new_text:
            raise ValueError("an entry cannot be empty; delete it instead")
        if new_text == entry.text:
            return entry
        if entry.layer == Layer.CONVERSATION:
            row = self.conversations.row(entry.id)
            if row is None:
                raise ConflictError(f"conversation memory {entry.id} was deleted by another writer")
            if row["updated_at"] != int(round(entry.updated_at * 1000)) or row["content"] != entry.text:
                raise ConflictError(f"conversation memory {entry.id} was changed by another writer; not overwritten")
            after = dict(row, content=new_text, updated_at=max(now_ms(), row["updated_at"] + 1))
            self.log.apply("edit", f"edit {entry.source_ref} {_snippet(entry.text)}", {}, {},
                           [RowChange(entry.id, row, after)])
            self.reload(conversation=True, reason="write")
            return self.get(entry.id)
        rec = self._record_for(entry)
        raw = self._raw_entry(rec, entry)
        with _naming(rec.path):
            new_data = md.replace_entry(rec.parsed, raw, new_text, date.today()).encode("utf-8")
        self.log.apply("edit", f"edit {entry.source_ref} {_snippet(entry.text)}", {rec.path: (entry.layer, new_data)}, {rec.path: rec.data})
        self.reload(changed=[rec.path], conversation=False, reason="write")
        return self.entry_at(rec.path, entry.line_start)

    def plan_delete(self, entries: Iterable[Entry]) -> PlannedDelete:
        """Work out deleting `entries` (several per file at once) without writing: what the
        confirmation shows (`PlannedDelete.merged`) and what `delete_entries` then applies.
        Raises as the delete would (a refused edit, an entry gone)."""
        entries = list(entries)
        by_file: dict[Path, list[Entry]] = {}
        rows: list[RowChange] = []
        for e in entries:
            if e.layer == Layer.CONVERSATION:
                row = self.conversations.row(e.id)
                if row is not None:
                    rows.append(RowChange(e.id, row, None))
            elif e.path is not None:
                by_file.setdefault(e.path, []).append(e)
        writes: dict[Path, tuple[str, bytes | None]] = {}
        expected: dict[Path, bytes | None] = {}
        merged: list[str] = []
        today = date.today()
        for path, group in by_file.items():
            rec = self._record_for(group[0])
            raws = [self._raw_entry(rec, e) for e in group]
            with _naming(path):
                text = md.delete_entries(rec.parsed, raws, today)
            writes[path] = (group[0].layer, text.encode("utf-8"))
            expected[path] = rec.data
            if md.rest_merged(rec.parsed, text):
                merged.append(rec.rel)
        return PlannedDelete(tuple(entries), writes, expected, rows, tuple(merged))

    def delete_entries(self, entries: Iterable[Entry] | PlannedDelete) -> Change | None:
        """Delete entries as one undoable change: worked out here, or as `plan_delete` worked
        them out for a confirmation. Such a plan is applied as it is while its files and rows
        are; when one changed meanwhile it is worked out again, and refused if the rest of a
        file would then become one entry other than as confirmed."""
        if isinstance(entries, PlannedDelete):
            plan = entries
            if not self._still_holds(plan):
                again = self.plan_delete(plan.entries)
                if again.merged != plan.merged:
                    raise ConflictError("the file changed while the delete was confirmed, and deleting now would "
                                        "change what the rest of it reads as; not deleted, ask again")
                plan = again
        else:
            plan = self.plan_delete(entries)
        if not plan.entries:
            return None
        change = self.log.apply("delete", _summary("delete", list(plan.entries)), plan.writes, plan.expected, plan.rows)
        self.reload(changed=list(plan.writes), conversation=bool(plan.rows), reason="write")
        return change

    def _still_holds(self, plan: PlannedDelete) -> bool:
        """Whether the files and rows a plan was worked out from are still as it read them."""
        return (all(read_if_exists(path) == data for path, data in plan.expected.items())
                and all(self.conversations.row(change.id) == change.before for change in plan.rows))

    def create_entry(self, layer: str, text: str, category: str = "", tags: Iterable[str] = (),
                     conversation_id: str | None = None, source: str = "manual",
                     section: str | None = None) -> Entry | None:
        """Add one entry. `source="auto"` (a model wrote it): a conversation row says so, and a
        Markdown entry goes to the layer's learned.md, whose frontmatter says `source: auto`
        (a person's file never holds it, so review applies to it alone). `section`: under that
        heading of the file (made at the end when missing)."""
        text = gate.clean_text(text)
        if not text:
            raise ValueError("a memory cannot be empty")
        tags = [t for t in tags if t]
        if layer == Layer.CONVERSATION:
            if conversation_id is None:
                conversation_id = self.workspace_conversation_id()
                self.conversations.ensure_conversation(conversation_id, "Added in memtui", str(self.paths.workspace))
            stamp = now_ms()
            memory_id = str(uuid.uuid4())
            row: dict[str, object] = {"id": memory_id, "type": Layer.CONVERSATION, "category": category or "knowledge",
                   "content": text, "tags": json.dumps(tags, ensure_ascii=False), "source": source,
                   "conversation_id": conversation_id, "file_path": None, "created_at": stamp, "updated_at": stamp}
            self.log.apply("create", f"add {_snippet(text)} to the conversation layer", {}, {},
                           [RowChange(memory_id, None, row)])
            self.reload(conversation=True, reason="write")
            return self.get(memory_id)
        by_model = source != "manual"
        path = self.paths.model_file(layer) if by_model else self.paths.default_file(layer)
        try:
            self.paths.writable_root(layer)  # never through a root that leads out of the workspace
        except UnsafePathError as exc:
            raise ConflictError(str(exc)) from None
        with self._lock:
            rec = self.scan.files.get(path)
        if rec is None and (path.exists() or path.is_symlink()):
            problem = self.scan.problem_of(path)
            reason = problem.message if problem else "it could not be read"
            raise ConflictError(f"{path} exists but is not usable as memory ({reason}); not touched")
        today = date.today()

        def build() -> tuple[dict[Path, tuple[str, bytes | None]], dict[Path, bytes | None]]:
            """The append, made under the writer lock from the file as it is then."""
            try:
                current = read_regular_if_exists(path, MAX_FILE_BYTES)
                parsed = None if current is None else md.parse_text(md.decode(current))
            except (OSError, md.MemoryFileError) as exc:
                reason = getattr(exc, "reason", None) or getattr(exc, "strerror", None) or str(exc)
                raise ConflictError(f"{path} is not usable as memory ({reason}); not touched") from None
            if by_model and parsed is not None and str(parsed.meta.get("source", "")).strip().casefold() != source:
                raise ValueError(f"{path} is not marked `source: {source}`, so what a model writes cannot go "
                                    "there (it would pass as a person's memory); nothing was written")
            with _naming(path):
                header = md.new_file_header(category, tags, today, source) if parsed is None else ""
                if section:  # under that heading (made at the end when missing)
                    data = md.append_in_section(parsed, text, today, section, header)
                elif parsed is None:
                    data = md.append_item(None, text, today, header)
                else:
                    data = md.append_item(parsed, text, today)
            return {path: (layer, data.encode("utf-8"))}, {path: current}

        self.log.apply("create", f"add {_snippet(text)} to {path.name}", {}, {}, build=build)
        self.reload(changed=[path], conversation=False, reason="write")
        with self._lock:
            new = self.scan.files.get(path)
        if new and section:
            wanted = " ".join(text.split())
            return next((e for e in reversed(new.entries) if e.section == section and " ".join(e.text.split()) == wanted),
                        None)
        return new.entries[-1] if new and new.entries else None

    def accept_entries(self, entries: list[Entry], keys: list[str]) -> Change:
        """Record entries as reviewed (their review keys, SPEC §12) as one undoable change."""
        reviews = [ReviewChange(key, e.id, e.layer) for e, key in zip(entries, keys, strict=True)]
        return self.log.apply("accept", _summary("accept", entries), {}, {}, reviews=reviews)

    def set_flags(self, action: str, entries: list[Entry], flags: list[dict[str, object] | None]) -> Change:
        """Set entries' own pin and expiry (SPEC §18, memtui's table) as one undoable change."""
        changes = [FlagChange(e.id, e.layer, self.log.entry_flags.get(e.id), after)
                   for e, after in zip(entries, flags, strict=True)]
        return self.log.apply(action, _summary(action, entries), {}, {}, flags=changes)

    def entry_flags(self, entry_id: str) -> dict[str, object] | None:
        """An entry's own pin and expiry ({"pinned", "expires"}), None when it has none."""
        return self.log.entry_flags.get(entry_id)

    def workspace_conversation_id(self) -> str:
        return "memtui-" + hashlib.sha1(str(self.paths.workspace).encode()).hexdigest()[:12]

    def undo(self, expected_id: str | None = None, name: str | None = None) -> Change:
        """Reverse the newest change not yet undone, or the change `name` (see ChangeLog.undo).
        Raises LookupError when there is nothing to undo, ConflictError when it cannot be
        undone safely."""
        change, restored = self.log.undo(expected_id, name)
        self.reload(changed=restored, conversation=bool(change.rows), reason="undo")
        return change

    def undo_last(self) -> Change | None:
        try:
            return self.undo()
        except LookupError:
            return None


@contextmanager
def _naming(path: Path) -> Iterator[None]:
    """A refused edit (SPEC §2) says which file it would have changed."""
    try:
        yield
    except md.EditRefused as exc:
        raise md.EditRefused(f"{path_text(str(path))}: {exc}") from None


def _snippet(text: str, width: int = 48) -> str:
    one = " ".join(text.split())
    return "“" + (one if len(one) <= width else one[: width - 1] + "…") + "”"


def _summary(action: str, entries: list[Entry]) -> str:
    if len(entries) == 1:
        return f"{action} {entries[0].source_ref} {_snippet(entries[0].text)}"
    return f"{action} {len(entries)} memories"
