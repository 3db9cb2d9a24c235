"""Plain data shared by the store, the injection engine, the CLI and the TUI."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import NotRequired, TypedDict


class Layer(StrEnum):
    """The three layers of memory, in injection order."""

    USER = "user"
    PROJECT = "project"
    CONVERSATION = "conversation"


LAYERS: tuple[Layer, ...] = tuple(Layer)
FILE_LAYERS: tuple[Layer, ...] = (Layer.USER, Layer.PROJECT)


class Status(StrEnum):
    """An entry's status as injection sees it (SPEC §2: anything else counts as active)."""

    ACTIVE = "active"
    ARCHIVED = "archived"


class Importance(StrEnum):
    HIGH = "high"
    NORMAL = "normal"
    LOW = "low"


class CandidateStatus(StrEnum):
    """What injection decided for a candidate (SPEC §5)."""

    INCLUDED = "included"
    BELOW_GATE = "below_gate"
    MAX_ITEMS = "max_items"
    BUDGET = "budget"
    ARCHIVED = "archived"
    UNREVIEWED = "unreviewed"  # left out until reviewed (SPEC §12, memory.requireReview)
    SUPERSEDED = "superseded"  # replaced by a newer memory through `supersede` (SPEC §17)
    OUT_OF_SCOPE = "out_of_scope"  # a scoped file whose globs match no file in context (SPEC §16)
    EXPIRED = "expired"  # past its `expires` date (SPEC §18)


IMPORTANCE_RANK: dict[str, int] = {Importance.HIGH: 0, Importance.NORMAL: 1, Importance.LOW: 2}


class RetrievalStatus(TypedDict):
    """The retrieval in use, as `status` and `preview --json` print it: the mode, the model
    (name and version) when hybrid, else why keyword although hybrid was asked for."""

    mode: str  # keyword | hybrid
    requested: NotRequired[str]  # "hybrid", when it was asked for and could not be had
    model: dict[str, str] | None
    reason: NotRequired[str | None]


@dataclass(frozen=True, slots=True)
class Record:
    """What a memory says of itself, wherever it is: in memtui's store (`Entry`, which adds
    where it lives there) or read from another tool's format (`interop.Memory`, which adds
    where it was read and what that format alone knows)."""

    id: str
    layer: str  # user | project | conversation
    text: str
    category: str = ""
    tags: tuple[str, ...] = ()
    source: str = ""  # auto | manual (free text kept as found)
    importance: str = "normal"  # high | normal | low
    status: str = "active"  # active | archived (superseded counts as archived)
    section: str = ""
    name: str = ""
    description: str = ""


@dataclass(frozen=True, slots=True)
class Entry(Record):
    """One memory in the store: a Markdown entry (file + line span) or a conversation row.
    Its fields are `Record`'s, then these, in this order (a saved row is them positionally)."""

    updated_at: float = 0.0  # seconds since the epoch, UTC
    # Markdown entries
    path: Path | None = None
    rel_path: str = ""  # relative to the layer root, "/" separators
    line_start: int = 0  # 0-based, inclusive
    line_end: int = 0  # 0-based, exclusive
    kind: str = ""  # whole | item | block
    # Conversation entries
    conversation_id: str | None = None
    conversation_title: str = ""
    raw_status: str = ""  # the frontmatter value as written, for display
    # SPEC §15-18 (set by the work on each): always present, time-to-live, scope, replaced by
    pinned: bool = False  # `pinned: true` / `alwaysApply: true` in the frontmatter, or `memtui pin`
    expires: float | None = None  # seconds since the epoch, UTC: left out after it (§18)
    paths: tuple[str, ...] = ()  # the file's scope globs, relative to the workspace root (§16)
    superseded_by: str = ""  # the id of the memory that replaced this one (§17)
    terms: frozenset[str] = field(default=frozenset(), compare=False, repr=False)

    @property
    def archived(self) -> bool:
        return self.status == Status.ARCHIVED

    @property
    def line(self) -> int:
        """1-based line of the entry's first line in its file."""
        return self.line_start + 1

    @property
    def source_ref(self) -> str:
        """`path:line` for Markdown (root-relative), `conversation:<cid>/<id>` for SQLite."""
        if self.layer == Layer.CONVERSATION:
            return f"conversation:{self.conversation_id or ''}/{self.id}"
        return f"{self.rel_path}:{self.line}"

    @property
    def updated_iso(self) -> str:
        return datetime.fromtimestamp(self.updated_at, tz=UTC).isoformat()

    def as_dict(self) -> dict[str, object]:
        data: dict[str, object] = {
            "id": self.id,
            "layer": self.layer,
            "source": self.source_ref,
            "category": self.category,
            "tags": list(self.tags),
            "origin": self.source,
            "importance": self.importance,
            "status": "superseded" if self.superseded_by else self.status,
            "section": self.section,
            "text": self.text,
            "updated_at": self.updated_iso,
        }
        if self.superseded_by:
            data["superseded_by"] = self.superseded_by  # the id of the memory that replaced it (§17)
        if self.layer == Layer.CONVERSATION:
            data["conversation_id"] = self.conversation_id
            data["conversation_title"] = self.conversation_title
        else:
            data["path"] = str(self.path)
            data["line_start"] = self.line
            data["line_end"] = self.line_end
            if self.name:
                data["name"] = self.name
            if self.description:
                data["description"] = self.description
            if self.paths:
                data["paths"] = list(self.paths)  # its file's scope (SPEC §16)
        return data
