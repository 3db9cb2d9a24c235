"""Plain data shared by the store, the injection engine, the CLI and the TUI."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, NotRequired, TypedDict


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


LAYER_OF: dict[str, Layer] = {layer.value: layer for layer in Layer}  # a layer's name (a saved row's) -> the Layer
STATUS_OF: dict[str, Status] = {status.value: status for status in Status}
IMPORTANCE_OF: dict[str, Importance] = {importance.value: importance for importance in Importance}


def importance_of(value: object) -> Importance:
    """The importance a frontmatter (or backup) value means (SPEC §2): high or low, anything
    else normal."""
    return IMPORTANCE_OF.get(value, Importance.NORMAL) if isinstance(value, str) else Importance.NORMAL


def status_of(value: object) -> Status:
    """The status a frontmatter (or backup) value means (SPEC §2): archived or superseded is
    archived, anything else active."""
    return Status.ARCHIVED if value in ("archived", "superseded") else Status.ACTIVE


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
    layer: Layer
    text: str
    category: str = ""
    tags: tuple[str, ...] = ()
    source: str = ""  # auto | manual (free text kept as found)
    importance: Importance = Importance.NORMAL  # `importance_of` the value as written
    status: Status = Status.ACTIVE  # `status_of` the value as written (superseded counts as archived)
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


def memory_file_label(entry: Entry) -> str:
    """A Markdown entry's memory file as rules and scopes name it: `.muse/memory/<path>` in
    the workspace, `~/.muse/memory/<path>` in the Muse home."""
    return f".muse/memory/{entry.rel_path}" if entry.layer == Layer.PROJECT else f"~/.muse/memory/{entry.rel_path}"


_NAMES = [f.name for f in fields(Entry)]
_BY_NAME = ((_NAMES.index("layer"), LAYER_OF), (_NAMES.index("importance"), IMPORTANCE_OF),
            (_NAMES.index("status"), STATUS_OF))


def with_enums(row: Sequence[Any]) -> list[Any]:
    """Entry's fields in order as a saved row holds them (the layer, importance and status by
    name, as marshal keeps them), with those three as their enum members."""
    out = list(row)
    for at, member in _BY_NAME:
        out[at] = member[out[at]]
    return out
