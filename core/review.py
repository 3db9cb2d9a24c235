"""Reviewing what the assistant learned (SPEC §12).

Muse's extractor writes memories on its own (`source: auto`, in files and rows) and imports
bring in other tools' memories (`source: import`). Such an entry is *unreviewed* until the
person accepts it, or edits it in memtui (an edit is a review).

The review state lives in memtui's own table in muse.db (`memtui_reviewed`), never in a
memory file or in Muse's tables. Its key is the entry's id together with its text: a
Markdown entry's id already changes with its text, and a conversation row keeps its id when
the extractor rewrites it, so a change of text from outside finds no key and the entry is
unreviewed again; memtui's own edit records the new key as it writes.

What is here decides (which entries await review, where each came from); the actions on
them (the inbox, accept, reject) are in `core.actions`, which imports this module, never the
reverse.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING

from .model import LAYERS, Entry, Layer

if TYPE_CHECKING:
    from .store import MemoryStore
    from .store.index import ReviewState

log = logging.getLogger("memtui.review")

READ_WAIT_S = 0.2  # how long the hook's read of the review table waits for another writer of muse.db
REVIEW_SOURCES = frozenset({"auto", "import"})  # who wrote it: the assistant, or another tool through import


def from_assistant(source: str) -> bool:
    """Was it written by the assistant or an import (and so waits for a person)?"""
    return source.strip().casefold() in REVIEW_SOURCES


def needs_review(entry: Entry) -> bool:
    return from_assistant(entry.source)


def key_of(layer: str, entry_id: str, text: str) -> str:
    """What an accept records: an entry's layer, id and exact text, hashed."""
    return hashlib.sha256(f"{layer}\0{entry_id}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()


def review_key(entry: Entry) -> str:
    return key_of(entry.layer, entry.id, entry.text)


def unreviewed_among(entries: Iterable[Entry], reviewed: set[str]) -> list[Entry]:
    if not reviewed:  # nothing accepted yet: no key to make (a hash of each text)
        return [e for e in entries if needs_review(e)]
    return [e for e in entries if needs_review(e) and review_key(e) not in reviewed]


def read_reviewed(db_path: Path) -> set[str]:
    """The accepted keys, read with the standard library alone (the hook's path); an empty set
    when there is no database or no review table. Creates nothing. Waits at most briefly for
    another writer (a prompt waits on it); a lock it cannot pass raises, and `held_back` then
    holds every auto/import memory back."""
    if not db_path.is_file():
        return set()
    conn = sqlite3.connect(db_path, timeout=READ_WAIT_S)
    try:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'memtui_reviewed'").fetchone():
            return {r[0] for r in conn.execute("SELECT key FROM memtui_reviewed")}
        return set()
    finally:
        conn.close()


# (layer, id, text, source) of an entry: what deciding its review needs, without the entry itself
ReviewFields = tuple[str, str, str, str]


def held_back(state: ReviewState | Path, entries: Iterable[Entry] | Iterable[ReviewFields]) -> frozenset[str]:
    """The ids of the unreviewed entries among `entries` (entries, or their ReviewFields), for
    `memory.requireReview`. `state`: the store's review state, or the path of muse.db. When the
    review state cannot be read, every auto or import entry counts as unreviewed (the setting
    asks to send nothing unjudged)."""
    try:
        reviewed = read_reviewed(state) if isinstance(state, Path) else state.accepted()
    except Exception as exc:  # a locked or damaged database: fail closed
        log.warning("review state unreadable, holding back every auto/import memory: %s", exc)
        reviewed = set()
    held = set()
    for item in entries:
        layer, entry_id, text, source = ((item.layer, item.id, item.text, item.source) if isinstance(item, Entry)
                                         else item)
        if from_assistant(source) and key_of(layer, entry_id, text) not in reviewed:
            held.add(entry_id)
    return frozenset(held)


# ---------------------------------------------------------------------- where an entry came from
@dataclass(frozen=True)
class Provenance:
    """Where an unreviewed entry came from: a conversation (title and time), an import (its
    origin file) or a Markdown file and line."""

    kind: str  # conversation | import | file
    label: str  # one line for a person
    time: str  # ISO 8601, UTC: the row's or the entry's last change
    conversation_id: str | None = None
    conversation_title: str = ""
    origin: str = ""
    path: str = ""
    line: int = 0

    def as_dict(self) -> dict[str, object]:
        data: dict[str, object] = {"kind": self.kind, "label": self.label, "time": self.time}
        if self.kind == "conversation":
            data["conversation_id"] = self.conversation_id
            data["conversation_title"] = self.conversation_title
        else:
            data["path"] = self.path
            data["line"] = self.line
            if self.origin:
                data["origin"] = self.origin
        return data


def _when(entry: Entry) -> str:
    return datetime.fromtimestamp(entry.updated_at, tz=UTC).strftime("%Y-%m-%d %H:%M")


def conversation_provenance(entry: Entry) -> Provenance:
    title = entry.conversation_title or (f"conversation {entry.conversation_id}" if entry.conversation_id
                                         else "no conversation")
    return Provenance("conversation", f"“{title}” · {_when(entry)}", entry.updated_iso, entry.conversation_id,
                      entry.conversation_title)


def provenance(store: MemoryStore, entry: Entry) -> Provenance:
    if entry.layer == Layer.CONVERSATION:
        return conversation_provenance(entry)
    time = entry.updated_iso
    rec = store.file_record(entry.path) if entry.path is not None else None
    origin = ""
    if rec is not None and entry.source.strip().casefold() == "import":
        value = rec.parsed.meta.get("origin")
        origin = value.strip() if isinstance(value, str) else ""
    where = entry.source_ref
    path = str(entry.path or "")
    if origin:
        return Provenance("import", f"imported from {origin} · {where}", time, origin=origin, path=path, line=entry.line)
    return Provenance("file", f"{where} · {_when(entry)}", time, path=path, line=entry.line)


class Pending:
    """One entry waiting for review, with where it came from: a conversation entry's is made
    when first asked for (from the entry alone), so an inbox of tens of thousands of rows
    costs what the screen shows of it."""

    __slots__ = ("entry", "_provenance")

    def __init__(self, entry: Entry, provenance: Provenance | None = None) -> None:
        if provenance is None and entry.layer != Layer.CONVERSATION:
            raise ValueError("a Markdown entry's provenance is read from its file record: pass it")
        self.entry = entry
        self._provenance = provenance

    @property
    def provenance(self) -> Provenance:
        if self._provenance is None:
            self._provenance = conversation_provenance(self.entry)
        return self._provenance

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Pending) and (self.entry, self.provenance) == (other.entry, other.provenance)

    def __hash__(self) -> int:
        return hash(self.entry)

    def __repr__(self) -> str:
        return f"Pending({self.entry!r})"

    def as_dict(self) -> dict[str, object]:
        data = self.entry.as_dict()
        data["provenance"] = self.provenance.as_dict()
        return data


def newest_first(entries: Iterable[Entry]) -> list[Entry]:
    """Newest first, then by layer, file, line and id: sorted by each key in turn from the
    last (sorts are stable), so no key tuple is made per entry (tens of thousands of rows)."""
    rank: dict[str, int] = {layer: i for i, layer in enumerate(LAYERS)}
    out = sorted(entries, key=attrgetter("id"))
    out.sort(key=attrgetter("line_start"))
    out.sort(key=attrgetter("rel_path"))
    out.sort(key=lambda e: rank.get(e.layer, 9))
    out.sort(key=attrgetter("updated_at"), reverse=True)  # reverse keeps equal ones in their order
    return out


def edited(store: MemoryStore, entry: Entry | None) -> None:
    """memtui's own edit is a review: record the new text as reviewed (never raises: the
    edit itself is written; a review state that cannot be saved only keeps it in the inbox)."""
    if entry is None or not needs_review(entry):
        return
    try:
        store.review_state.add([(review_key(entry), entry.id)])
    except Exception as exc:
        log.warning("edit not recorded as a review: %s", exc)
