"""A change as memtui's undo log records it (SPEC §8): the files, rows, reviews and flags it
changed, before and after, its state in the log, and where a logged file may be restored
(`safe_target`). The log itself, its lock and the trash are `edits.ChangeLog`'s."""

from __future__ import annotations

import os
import re
import stat
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from ..fileio import ConflictError
from ..model import Layer
from ..paths import Paths, UnsafePathError

MANIFEST = "manifest.json"
MAX_MANIFEST_BYTES = 4 * 1024 * 1024  # a change's record in the trash (its file names and digests)
PENDING, DONE, UNDONE, UNDOING = "pending", "done", "undone", "undoing"


class UndoError(ConflictError):
    """Undo refused: what it would restore over has changed, or the record is unusable."""


@dataclass
class FileChange:
    layer: str  # user | project
    rel: str  # path relative to the layer's memory root, "/" separators
    saved: str | None  # name of the previous version in the change's folder (None: there was no file)
    after_sha256: str | None  # what memtui left there (None: memtui removed the file)


@dataclass
class RowChange:
    id: str
    before: dict[str, Any] | None  # the row as it was (None: memtui created it)
    after: dict[str, Any] | None  # the row as memtui left it (None: memtui deleted it)


@dataclass
class ReviewChange:
    """An entry accepted in review (SPEC §12): the key memtui's review table gained. Undo
    removes the key, so the entry is awaiting review again."""

    key: str
    id: str
    layer: str


@dataclass
class FlagChange:
    """An entry's own pin or expiry changed (SPEC §18): memtui's entry-flags table, before and
    after (`{"pinned", "expires"}`, None: no row). Undo puts `before` back."""

    id: str
    layer: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None


@dataclass
class Change:
    """One change memtui made, as kept in the undo log."""

    id: str
    time: float
    action: str  # create | edit | delete | import | accept
    summary: str
    workspace: str
    files: list[FileChange] = field(default_factory=list)
    rows: list[RowChange] = field(default_factory=list)
    reviews: list[ReviewChange] = field(default_factory=list)
    flags: list[FlagChange] = field(default_factory=list)  # pins and expiries (SPEC §18)
    state: str = PENDING
    conflict: str = ""  # why the last undo of it was refused (it is then passed over by a plain undo)
    folder: Path | None = None

    @property
    def conflicting(self) -> bool:
        return self.state == DONE and bool(self.conflict)

    @property
    def status(self) -> str:
        """done | undone | conflicting (what `undo --list` shows)."""
        return "conflicting" if self.conflicting else self.state

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("folder")
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], folder: Path) -> Change:
        """A logged change; ValueError/TypeError/KeyError when the record is not one memtui
        wrote (a field of the wrong type is refused here, not met later as a traceback)."""
        files_raw, rows_raw, reviews_raw = data.get("files", []), data.get("rows", []), data.get("reviews", [])
        if not isinstance(files_raw, list) or not isinstance(rows_raw, list) or not isinstance(reviews_raw, list):
            raise ValueError("files, rows and reviews must be lists")
        files = [FileChange(**f) for f in files_raw]
        rows = [RowChange(**r) for r in rows_raw]
        reviews = [ReviewChange(**r) for r in reviews_raw]
        if not all(isinstance(f.layer, str) and isinstance(f.rel, str) and _str_or_none(f.saved)
                   and _str_or_none(f.after_sha256) for f in files):
            raise ValueError("a file change has a field of the wrong type")
        if not all(isinstance(r.id, str) and all(v is None or isinstance(v, dict) for v in (r.before, r.after))
                   for r in rows):
            raise ValueError("a row change has a field of the wrong type")
        if not all(isinstance(r.key, str) and isinstance(r.id, str) and isinstance(r.layer, str) for r in reviews):
            raise ValueError("a review change has a field of the wrong type")
        flags_raw = data.get("flags", [])
        if not isinstance(flags_raw, list):
            raise ValueError("flags must be a list")
        flags = [FlagChange(**f) for f in flags_raw]
        if not all(isinstance(f.id, str) and all(v is None or isinstance(v, dict) for v in (f.before, f.after))
                   for f in flags):
            raise ValueError("a flag change has a field of the wrong type")
        return cls(
            id=str(data["id"]), time=float(data["time"]), action=str(data["action"]),
            summary=str(data.get("summary", "")), workspace=str(data.get("workspace", "")),
            files=files, rows=rows, reviews=reviews, flags=flags, state=str(data.get("state", DONE)), conflict=str(data.get("conflict") or ""),
            folder=folder,
        )


def _str_or_none(value: object) -> bool:
    return value is None or isinstance(value, str)


def new_change_id() -> str:
    return time.strftime("%Y%m%dT%H%M%S") + f"-{time.time_ns() % 1_000_000_000:09d}-" + uuid.uuid4().hex[:6]


_SAFE_PART = re.compile(r"^[^/\x00]+$")


def safe_target(paths: Paths, layer: str, rel: str) -> Path:
    """The file a logged change names, resolved inside its memory root; refused when the
    relative path leaves the root, names a hidden part, or passes through a symlink."""
    if layer not in (Layer.USER, Layer.PROJECT):
        raise UndoError(f"undo log names an unknown layer {layer!r}; not restored")
    parts = PurePosixPath(rel).parts
    if (not parts or PurePosixPath(rel).is_absolute()
            or any(p in ("..", ".") or p.startswith(".") or not _SAFE_PART.match(p) for p in parts)
            or not rel.endswith(".md")):
        raise UndoError(f"undo log names an unsafe path {rel!r}; not restored")
    try:
        root = paths.writable_root(layer)  # the root itself must not lead out of its workspace/home
    except UnsafePathError as exc:
        raise UndoError(f"{exc}; not restored") from None
    current = root
    for part in parts:
        current = current / part
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            break
        except OSError as exc:
            raise UndoError(f"{current}: {exc.strerror or exc}; not restored") from None
        if stat.S_ISLNK(st.st_mode):
            raise UndoError(f"{current} is a symlink; undo never writes through one")
    return root.joinpath(*parts)
