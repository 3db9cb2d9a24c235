"""Changes to memories (SPEC §8): checked atomic writes under one writer lock, the trash
and the undo log.

The trash and the log live in the Muse home (`<home>/trash/<change id>/`), never inside a
workspace: a cloned repository can ship any file under `.muse/`, so nothing found there is
trusted to name a path. A logged change names its files by layer and a path relative to
that layer's memory root; undo resolves the root from the current home and workspace and
refuses any path that leaves it or passes through a symlink.

Every change is logged *pending* before anything is written and *done* after, so a process
killed in between leaves a record that the next reader settles: if the write happened the
change becomes undoable, if not it is dropped.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import stat
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath

from ..fileio import ConflictError, atomic_write_bytes, read_if_exists, read_regular, sha256
from ..model import Layer
from ..paths import MAX_FILE_BYTES, Paths, UnsafePathError
from .index import MuseDB

MANIFEST = "manifest.json"
KEEP = 200  # changes kept in the log (SPEC §8: at least the last 100)
PENDING, DONE, UNDONE = "pending", "done", "undone"


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
    before: dict | None  # the row as it was (None: memtui created it)
    after: dict | None  # the row as memtui left it (None: memtui deleted it)


@dataclass
class Change:
    """One change memtui made, as kept in the undo log."""

    id: str
    time: float
    action: str  # create | edit | delete | import | undo
    summary: str
    workspace: str
    files: list[FileChange] = field(default_factory=list)
    rows: list[RowChange] = field(default_factory=list)
    state: str = PENDING
    folder: Path | None = None

    @property
    def undone(self) -> bool:
        return self.state == UNDONE

    def as_dict(self) -> dict:
        data = asdict(self)
        data.pop("folder")
        return data

    @classmethod
    def from_dict(cls, data: dict, folder: Path) -> Change:
        """A logged change; ValueError/TypeError/KeyError when the record is not one memtui
        wrote (a field of the wrong type is refused here, not met later as a traceback)."""
        files_raw, rows_raw = data.get("files", []), data.get("rows", [])
        if not isinstance(files_raw, list) or not isinstance(rows_raw, list):
            raise ValueError("files and rows must be lists")
        files = [FileChange(**f) for f in files_raw]
        rows = [RowChange(**r) for r in rows_raw]
        if not all(isinstance(f.layer, str) and isinstance(f.rel, str) and _str_or_none(f.saved)
                   and _str_or_none(f.after_sha256) for f in files):
            raise ValueError("a file change has a field of the wrong type")
        if not all(isinstance(r.id, str) and all(v is None or isinstance(v, dict) for v in (r.before, r.after))
                   for r in rows):
            raise ValueError("a row change has a field of the wrong type")
        return cls(
            id=str(data["id"]), time=float(data["time"]), action=str(data["action"]),
            summary=str(data.get("summary", "")), workspace=str(data.get("workspace", "")),
            files=files, rows=rows, state=str(data.get("state", DONE)), folder=folder,
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


class ChangeLog:
    """The writer lock, the trash and the undo log of one Muse home.

    One class on purpose: a change is checked, saved to the trash, logged pending, written
    and logged done under the one lock, and undo reads the same records under it; splitting
    the lock from the log would reopen the windows the lock closes."""

    def __init__(self, paths: Paths, db: MuseDB | None = None):
        self.paths = paths
        self.base = paths.home / "trash"
        self.db = db  # to settle pending row changes (one is opened for that when None)

    # ------------------------------------------------------------------ the writer lock
    @contextmanager
    def locked(self, blocking: bool = True) -> Iterator[bool]:
        """Serialise memtui's writers (every process, every root): held while a change is
        checked, written and logged, so a concurrent writer gets a conflict, never a silent win."""
        self.base.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.base / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
            except BlockingIOError:
                yield False
                return
            try:
                yield True
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    # ------------------------------------------------------------------ the log
    def _write_manifest(self, change: Change) -> None:
        assert change.folder is not None
        atomic_write_bytes(change.folder / MANIFEST,
                           json.dumps(change.as_dict(), indent=1, ensure_ascii=False).encode("utf-8"))

    def changes(self) -> list[Change]:
        """Every readable logged change, oldest first (unreadable records are ignored)."""
        found: list[Change] = []
        try:
            folders = list(self.base.iterdir())
        except OSError:
            return []
        for folder in folders:
            if folder.name.startswith(".") or folder.is_symlink() or not folder.is_dir():
                continue
            try:
                data = json.loads((folder / MANIFEST).read_bytes())
                found.append(Change.from_dict(data, folder))
            except (OSError, ValueError, TypeError, KeyError):
                continue
        found.sort(key=lambda c: (c.time, c.id))
        return found

    def _mine(self, change: Change) -> bool:
        """Changes this workspace can see: its own, and any that touched only the user layer
        or conversation rows (those are the same in every workspace)."""
        if change.workspace == str(self.paths.workspace):
            return True
        return all(f.layer == Layer.USER for f in change.files)

    def history(self) -> list[Change]:
        """The log as this workspace sees it, newest first (pending records settled)."""
        if not self.base.is_dir():  # nothing logged yet: reading the log creates nothing
            return []
        with self.locked():
            self._settle()
            return [c for c in reversed(self.changes()) if self._mine(c)]

    def _settle(self) -> None:
        """Decide the pending records a killed writer left (call with the lock held): the
        parts that were written (a file that holds what memtui meant to leave, a row that is
        as memtui meant to leave it) become an undoable change; the rest never happened and
        is forgotten, so undo never tries to "restore" what was not changed and is never stuck."""
        for change in self.changes():
            if change.state != PENDING:
                continue
            try:
                files = [f for f in change.files if self._current_sha(f) == f.after_sha256]
                rows = [r for r in change.rows if self._row_written(r)]
            except Exception:  # the database is locked or damaged: decide on a later read
                continue
            if not files and not rows:
                self._drop(change)
                continue
            change.files, change.rows, change.state = files, rows, DONE
            self._write_manifest(change)

    def _row_written(self, row: RowChange) -> bool:
        if not self.paths.db_path.is_file():
            return row.after is None
        db = self.db if self.db is not None else MuseDB(self.paths.db_path)
        try:
            db.check_rows_unchanged([row])
            return True
        except ConflictError:
            return False
        finally:
            if db is not self.db:
                db.close()

    def _current_sha(self, f: FileChange) -> str | None:
        try:
            data = read_if_exists(safe_target(self.paths, f.layer, f.rel))
        except (UndoError, OSError):
            return "?"
        return None if data is None else sha256(data)

    @staticmethod
    def _drop(change: Change) -> None:
        if change.folder is not None:
            shutil.rmtree(change.folder, ignore_errors=True)

    def _prune(self) -> None:
        changes = self.changes()
        for change in changes[: max(0, len(changes) - KEEP)]:
            self._drop(change)

    # ------------------------------------------------------------------ writing
    def apply(self, action: str, summary: str, writes: dict[Path, tuple[str, bytes | None]],
              expected: dict[Path, bytes | None], db: MuseDB | None = None,
              rows: list[RowChange] | None = None,
              row_writer: Callable[[MuseDB, list[RowChange]], list[RowChange]] | None = None) -> Change:
        """Make one change: files in `writes` (path -> (layer, new bytes or None to remove)),
        each of which must still hold `expected[path]`, and conversation rows through
        `row_writer` (which checks each row and returns the rows as it left them). Logged
        and undoable; raises ConflictError, leaving everything as it was, when something
        changed since it was read."""
        with self.locked():
            for path, before in expected.items():
                if read_if_exists(path) != before:
                    raise ConflictError(f"{path} changed on disk since it was read; not overwritten")
            change = Change(new_change_id(), time.time(), action, summary, str(self.paths.workspace))
            change.folder = self.base / change.id
            change.folder.mkdir(parents=True)
            try:
                for i, (path, (layer, data)) in enumerate(writes.items()):
                    before = expected.get(path)
                    saved = None
                    if before is not None:
                        saved = f"{i:03d}.md"
                        atomic_write_bytes(change.folder / saved, before)
                    rel = path.relative_to(self.paths.root(layer)).as_posix()
                    change.files.append(FileChange(layer, rel, saved, None if data is None else sha256(data)))
                change.rows = list(rows or [])
                self._write_manifest(change)  # pending: written before anything changes
            except BaseException:
                self._drop(change)
                raise
            written: list[Path] = []
            try:
                for path, (_layer, data) in writes.items():
                    try:
                        if data is None:
                            os.unlink(path)
                        else:
                            atomic_write_bytes(path, data, expected=expected.get(path))
                    except OSError as exc:  # name the memory file, not the temporary one beside it
                        if exc.filename == str(path) or exc.errno is None:
                            raise
                        raise OSError(exc.errno, exc.strerror, str(path)) from None
                    written.append(path)
                if row_writer is not None and db is not None:
                    change.rows = row_writer(db, change.rows)
            except BaseException:
                for path in written:  # put back what was written before the failure
                    self._put_back(path, expected.get(path))
                self._drop(change)
                raise
            change.state = DONE
            self._write_manifest(change)
            self._prune()
            return change

    @staticmethod
    def _put_back(path: Path, data: bytes | None) -> None:
        try:
            if data is None:
                path.unlink(missing_ok=True)
            else:
                atomic_write_bytes(path, data)
        except OSError:
            pass

    # ------------------------------------------------------------------ undo
    def newest(self) -> Change | None:
        """The change `undo` would reverse now (the newest not yet undone)."""
        return next((c for c in self.history() if c.state == DONE), None)

    def undo(self, db: MuseDB, expected_id: str | None = None) -> tuple[Change, list[Path]]:
        """Reverse the newest change not yet undone. With `expected_id`, refuse when that is
        no longer the newest (another process changed something in between)."""
        with self.locked():
            self._settle()
            change = next((c for c in reversed(self.changes()) if self._mine(c) and c.state == DONE), None)
            if change is None:
                raise LookupError("nothing to undo")
            if expected_id is not None and change.id != expected_id:
                raise UndoError(f"the newest change is now {change.summary!r}; nothing undone")
            targets: list[tuple[Path, bytes | None]] = []
            for f in change.files:
                path = safe_target(self.paths, f.layer, f.rel)
                current = read_if_exists(path)
                if (None if current is None else sha256(current)) != f.after_sha256:
                    raise UndoError(f"{path} changed since memtui wrote it; not restored "
                                    f"(the previous version is kept in {change.folder})")
                previous = None
                if f.saved is not None:
                    assert change.folder is not None
                    try:  # a saved version is a regular file of the trash, never followed through a link
                        previous = read_regular(change.folder / Path(f.saved).name, MAX_FILE_BYTES,
                                                follow_symlinks=False)
                    except OSError as exc:
                        raise UndoError(f"the saved version in {change.folder} cannot be used "
                                        f"({getattr(exc, 'reason', None) or exc.strerror or exc}); not restored") from None
                targets.append((path, previous))
            if change.rows:
                db.check_rows_unchanged(change.rows)
            for path, previous in targets:
                if previous is None:
                    path.unlink(missing_ok=True)
                else:
                    atomic_write_bytes(path, previous)
            if change.rows:
                db.restore_rows(change.rows)
            change.state = UNDONE
            self._write_manifest(change)
            return change, [p for p, _ in targets]

    # ------------------------------------------------------------------ leftovers
    def remove_stale_temp_files(self, roots: list[Path], pattern: re.Pattern[str]) -> None:
        """Temp files of atomic writes that a killed writer left (`.name.md.xxxx.tmp`). Only
        when no memtui writer is active (the lock is free), so a live write is never touched."""
        if not self.paths.home.is_dir():
            return
        with self.locked(blocking=False) as free:
            if not free:
                return
            for root in roots:
                if not root.is_dir() or root.is_symlink():
                    continue
                for folder, dirs, files in os.walk(root):
                    dirs[:] = [d for d in dirs if not d.startswith(".")]
                    for name in files:
                        if pattern.match(name):
                            try:
                                (Path(folder) / name).unlink()
                            except OSError:
                                pass
