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

Undo is journaled the same way: before it restores anything, what memtui left in each file
is saved beside the previous version and the record says *undoing*. A process killed in
the middle leaves that record; the next reader finishes the undo when every file and row is
still either as memtui left it or already restored, and otherwise puts back what the undo
had restored, so a change is never left half undone. An undo refused because something
changed since is marked *conflicting* in the log: a plain undo passes over it from then on,
and any change can be undone by name.

Every write here goes through the write gate (`core/gate.py`): memory files below their
memory root, the trash below the Muse home.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import gate, jsondata
from ..bounded_reader import RefusedFileError, read_regular
from ..fileio import ConflictError, read_if_exists, sha256, walk
from ..model import Layer
from ..paths import MAX_FILE_BYTES, Paths
from .changes import (
    DONE,
    MANIFEST,
    MAX_MANIFEST_BYTES,
    PENDING,
    UNDOING,
    UNDONE,
    Change,
    FileChange,
    FlagChange,
    ReviewChange,
    RowChange,
    UndoError,
    new_change_id,
    safe_target,
)
from .conversations import Conversations
from .database import Database
from .index import EntryFlags, ReviewState

KEEP = 200  # changes kept in the log (SPEC §8: at least the last 100)


class ChangeLog:
    """The writer lock, the trash and the undo log of one Muse home.

    One class on purpose: a change is checked, saved to the trash, logged pending, written
    and logged done under the one lock, and undo reads the same records under it; splitting
    the lock from the log would reopen the windows the lock closes."""

    def __init__(self, paths: Paths, database: Database | None = None):
        self.paths = paths
        self.base = paths.home / "trash"
        # the rows and review keys a change writes, in the store's muse.db (its own when None)
        database = database if database is not None else Database(paths.db_path)
        self.conversations = Conversations(database)
        self.review_state = ReviewState(database)
        # undos a killed process left half done that this log settled, not yet said to a person:
        # (the change, True when finished / False when rolled back)
        self.interrupted: list[tuple[Change, bool]] = []
        self.entry_flags = EntryFlags(database)

    def take_interrupted(self) -> list[tuple[Change, bool]]:
        """The interrupted undos settled since last asked (finished: True; rolled back: False)."""
        done, self.interrupted = self.interrupted, []
        return done

    # ------------------------------------------------------------------ the writer lock
    @contextmanager
    def locked(self, blocking: bool = True) -> Iterator[bool]:
        """Serialise memtui's writers (every process, every root): held while a change is
        checked, written and logged, so a concurrent writer gets a conflict, never a silent win."""
        gate.make_dir(self.base, root=self.paths.home)
        # the lock file is empty and never written; opened with O_NOFOLLOW so a link planted
        # in its place is not followed (the gate checked the folders on the way)
        fd = os.open(self.base / ".lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
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

    # ------------------------------------------------------------------ the trash
    def _trash_write(self, path: Path, data: bytes) -> None:
        gate.write(path, data, root=self.paths.home, kind=gate.Kind.DATA)

    def _write_manifest(self, change: Change) -> None:
        assert change.folder is not None
        self._trash_write(change.folder / MANIFEST,
                          json.dumps(change.as_dict(), indent=1, ensure_ascii=False).encode("utf-8"))

    def _memory_write(self, path: Path, layer: str, data: bytes | None, expected: bytes | None | str = "any") -> None:
        """Write (or, with None, remove) a memory file through the gate: below its layer's
        root, which must stay inside its workspace (project) or be the user's own folder."""
        root, container = self.paths.root(layer), self.paths.container(layer)
        if data is None:
            gate.remove(path, root=root, container=container)
            _remove_empty_folders(path.parent, root, container)
        else:
            gate.write(path, data, root=root, container=container, kind=gate.Kind.MEMORY, expected=expected)

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
                data = jsondata.loads(read_regular(folder / MANIFEST, MAX_MANIFEST_BYTES, follow_symlinks=False).decode("utf-8"))
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
        return (all(f.layer == Layer.USER for f in change.files)
                and all(r.layer != Layer.PROJECT for r in change.reviews))

    def history(self) -> list[Change]:
        """The log as this workspace sees it, newest first (pending records settled)."""
        if not self.base.is_dir():  # nothing logged yet: reading the log creates nothing
            return []
        with self.locked():
            self._settle()
            return [c for c in reversed(self.changes()) if self._mine(c)]

    def _settle(self) -> None:
        """Decide the records a killed process left (call with the lock held).

        A *pending* change: the parts that were written (a file that holds what memtui meant
        to leave, a row that is as memtui meant to leave it) become an undoable change; the
        rest never happened and is forgotten, so undo never tries to "restore" what was not
        changed and is never stuck. An *undoing* change is finished or rolled back
        (`_settle_undo`). A change folder without a record (killed before its record was
        written) is removed, with the temporary files of killed writes."""
        self._remove_orphans()
        for change in self.changes():
            if not self._mine(change):
                continue  # its project files are another workspace's: settled by a run there
            if change.state == UNDOING:
                try:
                    self._settle_undo(change)
                except Exception:  # noqa: BLE001 - locked database, unreadable trash: decide on a later read
                    continue
                continue
            if change.state != PENDING:
                continue
            try:
                files = [f for f in change.files if self._current_sha(f) == f.after_sha256]
                rows = [r for r in change.rows if self._row_written(r)]
                accepted = self.review_state.accepted() if change.reviews else set()
                reviews = [r for r in change.reviews if r.key in accepted]
                flags = [f for f in change.flags if self._flags_are(f, f.after)]
            except Exception:  # the database is locked or damaged: decide on a later read
                continue
            if not files and not rows and not reviews and not flags:
                self._drop(change)
                continue
            change.files, change.rows, change.reviews, change.flags, change.state = files, rows, reviews, flags, DONE
            self._write_manifest(change)

    def _remove_orphans(self) -> None:
        try:
            folders = list(self.base.iterdir())
        except OSError:
            return
        for folder in folders:
            if folder.name.startswith("."):
                if _TEMP_NAME.match(folder.name):  # a killed atomic write of a record
                    gate.remove(folder, root=self.paths.home)
                continue
            if folder.is_symlink() or not folder.is_dir():
                continue
            try:
                names = [p.name for p in folder.iterdir()]
            except OSError:
                continue
            if MANIFEST not in names:
                gate.remove_tree(folder, root=self.paths.home)
                continue
            for name in names:
                if _TEMP_NAME.match(name):
                    gate.remove(folder / name, root=self.paths.home)

    def _row_written(self, row: RowChange) -> bool:
        return self._rows_are([row], "after")

    def _rows_are(self, rows: list[RowChange], side: str) -> bool:
        """Is every row as it was `before` the change, or as memtui left it `after`?"""
        if not rows:
            return True
        if not self.paths.db_path.is_file():
            return all(getattr(r, side) is None for r in rows)
        return self.conversations.rows_match(rows, side)

    def _current_sha(self, f: FileChange) -> str | None:
        try:
            data = read_if_exists(safe_target(self.paths, f.layer, f.rel))
        except (UndoError, OSError):
            return "?"
        return None if data is None else sha256(data)

    def _drop(self, change: Change) -> None:
        if change.folder is not None:
            gate.remove_tree(change.folder, root=self.paths.home)

    def _prune(self) -> None:
        changes = self.changes()
        for change in changes[: max(0, len(changes) - KEEP)]:
            self._drop(change)

    # ------------------------------------------------------------------ writing
    def apply(self, action: str, summary: str, writes: dict[Path, tuple[str, bytes | None]],
              expected: dict[Path, bytes | None], rows: list[RowChange] | None = None,
              build: Callable[[], tuple[dict[Path, tuple[str, bytes | None]], dict[Path, bytes | None]]] | None = None,
              reviews: list[ReviewChange] | None = None, flags: list[FlagChange] | None = None) -> Change:
        """Make one change: files in `writes` (path -> (layer, new bytes or None to remove)),
        each of which must still hold `expected[path]`, and conversation `rows` (each written
        only while it is still `before`), and review keys in `reviews`. Logged
        and undoable; raises ConflictError, leaving everything as it was, when something
        changed since it was read, and gate.Refused when a target or its data is refused.

        With `build`, the writes and what they expect are made under the writer lock from
        the files as they are then (an append re-reads its file there, so another memtui
        writer can never make it lose the race over and over)."""
        if build is None:
            self._check_all(writes)
        with self.locked():
            if build is not None:
                writes, expected = build()
                self._check_all(writes)
            for path, before in expected.items():
                if read_if_exists(path) != before:
                    raise ConflictError(f"{path} changed on disk since it was read; not overwritten")
            change = Change(new_change_id(), time.time(), action, summary, str(self.paths.workspace))
            change.folder = self.base / change.id
            gate.make_dir(change.folder, root=self.paths.home)
            try:
                for i, (path, (layer, data)) in enumerate(writes.items()):
                    before = expected.get(path)
                    saved = None
                    if before is not None:
                        saved = f"{i:03d}.md"
                        self._trash_write(change.folder / saved, before)
                    rel = path.relative_to(self.paths.root(layer)).as_posix()
                    change.files.append(FileChange(layer, rel, saved, None if data is None else sha256(data)))
                change.rows = list(rows or [])
                change.reviews = list(reviews or [])
                change.flags = list(flags or [])
                self._write_manifest(change)  # pending: written before anything changes
            except BaseException:
                self._drop(change)
                raise
            written: list[tuple[Path, str]] = []
            try:
                for path, (layer, data) in writes.items():
                    try:
                        self._memory_write(path, layer, data, expected.get(path))
                    except gate.Refused:
                        raise
                    except OSError as exc:  # name the memory file, not the temporary one beside it
                        if exc.filename == str(path) or exc.errno is None:
                            raise
                        raise OSError(exc.errno, exc.strerror, str(path)) from None
                    written.append((path, layer))
                if change.rows:
                    change.rows = self.conversations.write_rows(change.rows)
                if change.reviews:
                    self.review_state.add([(r.key, r.id) for r in change.reviews])
                if change.flags:
                    self.entry_flags.put([(f.id, f.layer, f.after) for f in change.flags])
            except BaseException:
                for path, layer in written:  # put back what was written before the failure
                    self._put_back(path, layer, expected.get(path))
                self._drop(change)
                raise
            change.state = DONE
            self._write_manifest(change)
            self._prune()
            return change

    def _check_all(self, writes: dict[Path, tuple[str, bytes | None]]) -> None:
        for path, (layer, data) in writes.items():  # every target and its data, before anything
            gate.check(path, data, root=self.paths.root(layer), container=self.paths.container(layer),
                       kind=gate.Kind.MEMORY)

    def _put_back(self, path: Path, layer: str, data: bytes | None) -> None:
        try:
            self._memory_write(path, layer, data)
        except OSError:
            pass

    # ------------------------------------------------------------------ undo
    def newest(self) -> Change | None:
        """The change `undo` would reverse now: the newest not yet undone and not marked
        conflicting."""
        return next((c for c in self.history() if c.state == DONE and not c.conflict), None)

    def undo(self, expected_id: str | None = None, name: str | None = None) -> tuple[Change, list[Path]]:
        """Reverse the newest change not yet undone (passing over changes marked conflicting),
        or, with `name`, that change. With `expected_id`, refuse when that is no longer the
        change chosen (another process changed something in between).

        A change that cannot be undone because something changed since memtui wrote it is
        marked conflicting (kept in the log) and UndoError says how to go on."""
        if not self.base.is_dir():  # nothing logged yet: undoing creates nothing
            raise LookupError("nothing to undo" if name is None else f"no change {name!r} in the log")
        with self.locked():
            self._settle()
            mine = [c for c in reversed(self.changes()) if self._mine(c)]
            if name is not None:
                change = next((c for c in mine if c.id == name), None)
                if change is None:
                    candidates = [c for c in mine if c.id.startswith(name)] if name else []
                    if len(candidates) != 1:
                        raise LookupError(f"no change {name!r} in the log (see `memtui undo --list`)" if not candidates
                                          else f"{name!r} names {len(candidates)} changes; give more of the id")
                    change = candidates[0]
                if change.state == UNDONE:
                    raise UndoError(f"{change.summary!r} is already undone")
            else:
                change = next((c for c in mine if c.state == DONE and not c.conflict), None)
                if change is None:
                    stuck = [c for c in mine if c.conflicting]
                    if stuck:
                        raise LookupError(f"nothing to undo but {len(stuck)} conflicting change"
                                          f"{'s' if len(stuck) != 1 else ''}; once a file is back as memtui left it, "
                                          f"undo it by name (`memtui undo {stuck[0].id}`)")
                    raise LookupError("nothing to undo")
            if expected_id is not None and change.id != expected_id:
                raise UndoError(f"the change to undo is now {change.summary!r}; nothing undone")
            try:
                targets = self._undo_targets(change)
            except UndoError as exc:
                self._mark_conflict(change, str(exc))
                raise UndoError(f"{exc}. It stays in the log marked conflicting: `memtui undo` now passes over it "
                                f"to the change before it, and `memtui undo {change.id}` tries it again "
                                "(`memtui undo --list` shows the log)") from None
            self._journal_undo(change, targets)
            self._finish_undo(change, targets)
            return change, [t.path for t in targets]

    def _mark_conflict(self, change: Change, reason: str) -> None:
        change.conflict = reason
        try:
            self._write_manifest(change)
        except OSError:
            pass

    def _undo_targets(self, change: Change) -> list[_Restore]:
        """What undoing `change` writes, checked: every file and row still as memtui left it."""
        targets: list[_Restore] = []
        for f in change.files:
            path = safe_target(self.paths, f.layer, f.rel)
            try:
                current = read_if_exists(path)
            except RefusedFileError as exc:  # a FIFO or device in its place: changed, and never waited on
                raise UndoError(f"{path} {exc.reason} now; not restored "
                                f"(the previous version is kept in {change.folder})") from None
            if (None if current is None else sha256(current)) != f.after_sha256:
                raise UndoError(f"{path} changed since memtui wrote it; not restored "
                                f"(the previous version is kept in {change.folder})")
            targets.append(_Restore(path, f.layer, self._saved(change, f.saved), current))
        if change.rows:
            try:
                self.conversations.check_rows_unchanged(change.rows)
            except UndoError:
                raise
            except ConflictError as exc:
                raise UndoError(str(exc)) from None
        for flag in change.flags:
            if not self._flags_are(flag, flag.after):
                raise UndoError(f"the pin or expiry of {flag.id} changed since memtui set it; not restored")
        return targets

    def _flags_are(self, change: FlagChange, side: dict[str, Any] | None) -> bool:
        """Whether the entry's flags in memtui's table are `side` (None and no flag are the same)."""
        def norm(flags: dict[str, Any] | None) -> tuple[bool, float | None]:
            return (bool(flags.get("pinned")), flags.get("expires")) if flags else (False, None)

        return norm(self.entry_flags.get(change.id)) == norm(side)

    def _saved(self, change: Change, name: str | None) -> bytes | None:
        if name is None:
            return None
        assert change.folder is not None
        try:  # a saved version is a regular file of the trash, never followed through a link
            return read_regular(change.folder / Path(name).name, MAX_FILE_BYTES, follow_symlinks=False)
        except OSError as exc:
            raise UndoError(f"the saved version in {change.folder} cannot be used "
                            f"({getattr(exc, 'reason', None) or exc.strerror or exc}); not restored") from None

    def _journal_undo(self, change: Change, targets: list[_Restore]) -> None:
        """Before anything is restored: keep what memtui left in each file (so a killed undo
        can be rolled back) and mark the record *undoing*."""
        assert change.folder is not None
        for i, t in enumerate(targets):
            if t.after is not None:
                self._trash_write(change.folder / f"undo-{i:03d}.md", t.after)
        change.state = UNDOING
        self._write_manifest(change)

    def _finish_undo(self, change: Change, targets: list[_Restore]) -> None:
        try:
            for t in targets:
                if read_if_exists(t.path) != t.before:
                    self._memory_write(t.path, t.layer, t.before)
            if change.rows and not self._rows_are(change.rows, "before"):
                self.conversations.restore_rows(change.rows)
            if change.reviews:  # the entries await review again
                self.review_state.remove([r.key for r in change.reviews])
            if change.flags:
                self.entry_flags.put([(f.id, f.layer, f.before) for f in change.flags])
        except BaseException:
            self._roll_back_undo(change, targets)
            raise
        change.state, change.conflict = UNDONE, ""
        self._write_manifest(change)

    def _roll_back_undo(self, change: Change, targets: list[_Restore]) -> None:
        """Put back what an interrupted undo restored, so the change is simply not undone."""
        for t in targets:
            try:
                current = read_if_exists(t.path)
                if current != t.after and current == t.before:
                    self._memory_write(t.path, t.layer, t.after)
            except OSError:
                pass
        if change.rows:
            try:
                if self._rows_are(change.rows, "before"):
                    self.conversations.write_rows([RowChange(r.id, r.before, r.after) for r in change.rows])
            except Exception:  # noqa: BLE001 - the rows stay as they are; reported by the caller's error
                pass
        if change.reviews:
            try:
                self.review_state.add([(r.key, r.id) for r in change.reviews])
            except Exception:  # noqa: BLE001 - the review state stays as it is; reported by the caller's error
                pass
        if change.flags:
            try:
                self.entry_flags.put([(f.id, f.layer, f.after) for f in change.flags])
            except Exception:  # noqa: BLE001 - the flags stay as they are; reported by the caller's error
                pass
        change.state = DONE
        self._write_manifest(change)

    def _settle_undo(self, change: Change) -> None:
        """An undo a killed process left *undoing*: finished when every file and row is still
        either as memtui left it or already restored; rolled back (and marked conflicting)
        when something else changed one of them meanwhile."""
        assert change.folder is not None
        targets: list[_Restore] = []
        consistent = True
        for i, f in enumerate(change.files):
            path = safe_target(self.paths, f.layer, f.rel)
            before = self._saved(change, f.saved)
            after = None
            if f.after_sha256 is not None:
                after = read_regular(change.folder / f"undo-{i:03d}.md", MAX_FILE_BYTES, follow_symlinks=False)
            try:
                current: bytes | None | bool = read_if_exists(path)
            except RefusedFileError:  # a FIFO or device in its place: neither
                current = False
            if current != before and current != after:
                consistent = False
            targets.append(_Restore(path, f.layer, before, after))
        if change.rows and not (self._rows_are(change.rows, "after") or self._rows_are(change.rows, "before")):
            consistent = False
        if consistent:
            self._finish_undo(change, targets)
        else:
            self._roll_back_undo(change, targets)
            self._mark_conflict(change, "an undo of it was interrupted and a file changed meanwhile")
        self.interrupted.append((change, consistent))

    # ------------------------------------------------------------------ leftovers
    def remove_stale_temp_files(self, roots: list[tuple[Path, Path]], pattern: re.Pattern[str]) -> None:
        """Temp files of atomic writes that a killed writer left (`.name.md.xxxx.tmp`) below
        each (memory root, container), and folders of changes killed before their record was
        written. Only when no memtui writer is active (the lock is free), so a live write is
        never touched."""
        if not self.paths.home.is_dir():
            return
        with self.locked(blocking=False) as free:
            if not free:
                return
            self._remove_orphans()
            for root, container in roots:
                if not root.is_dir() or root.is_symlink():
                    continue
                for folder, dirs, files in walk(root):  # iterative: no nesting too deep
                    dirs[:] = [d for d in dirs if not d.startswith(".")]
                    for name in files:
                        if pattern.match(name):
                            try:
                                gate.remove(Path(folder) / name, root=root, container=container)
                            except OSError:
                                pass


def _remove_empty_folders(folder: Path, root: Path, container: Path) -> None:
    """After a memory file is removed (an undone import or `remember`, say), the folders below
    the memory root it leaves empty (`imported/agents-md/`) go too; the root itself stays, and
    a folder holding anything (a file, a hidden one, another folder) stays as it is."""
    while folder != root and root in folder.parents:
        try:
            gate.remove_dir(folder, root=root, container=container)
        except OSError:  # not empty, or no longer there: leave it and everything above it
            return
        folder = folder.parent


_TEMP_NAME = re.compile(r"^\..+\.[A-Za-z0-9_]{6,}\.tmp$")  # fileio's temporary names


@dataclass
class _Restore:
    """One file an undo restores: `before` is what it puts back (None: remove), `after` what
    memtui had left there."""

    path: Path
    layer: str
    before: bytes | None
    after: bytes | None
