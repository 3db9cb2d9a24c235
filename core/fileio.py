"""Atomic, checked writes (SPEC §8): temp file in the same directory, fsync, rename.

Every write works inside a folder opened by descriptor, walked down from the root the
write gate checked one component at a time with O_NOFOLLOW (`open_below`): a folder swapped
for a symlink after the gate's check makes the walk fail instead of leading the write out of
the root, and the temporary file, the rename and the removal all name their file relative to
that descriptor.
"""

from __future__ import annotations

import errno
import hashlib
import os
import secrets
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from .bounded_reader import read_regular_if_exists

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)


class ConflictError(RuntimeError):
    """The file changed on disk since memtui read it; nothing was written."""


class LinkRace(OSError):
    """A folder on the way to a write became a symlink (or something else than a folder)
    after the write gate checked it; nothing was written. `path` is that folder."""

    def __init__(self, path: Path):
        super().__init__(errno.ELOOP, "is no longer a folder (a symlink put in its place?)", str(path))
        self.path = path


@contextmanager
def open_below(root: Path, parts: tuple[str, ...], create: bool = False, mode: int = 0o777) -> Iterator[int]:
    """A descriptor for the folder `root/parts...`, reached from `root` (which may itself be a
    link: the gate checked where it leads) one component at a time, never through a symlink;
    with `create`, missing folders are made on the way (the root and its parents by path).
    LinkRace when a component is a symlink or not a folder; FileNotFoundError when one is
    missing and not created."""
    if create:
        os.makedirs(root, mode=mode, exist_ok=True)
    fd = os.open(root, _DIR_FLAGS)
    try:
        where = root
        for part in parts:
            where = where / part
            try:
                child = os.open(part, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(part, mode, dir_fd=fd)
                except FileExistsError:
                    pass
                child = _open_child(part, fd, where)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise LinkRace(where) from None
                raise
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def _open_child(part: str, fd: int, where: Path) -> int:
    try:
        return os.open(part, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise LinkRace(where) from None
        raise


def _parts(path: Path, root: Path | None) -> tuple[Path, tuple[str, ...]]:
    """The folder to start from and the components below it to `path`'s folder."""
    folder = path.parent
    if root is None or root == path:
        return folder, ()
    return root, folder.relative_to(root).parts


def _temp_in(fd: int, name: str) -> tuple[str, int]:
    """A new private temporary file beside `name` in the folder `fd`: (its name, a descriptor
    open for writing). The name is `.NAME.XXXXXXXX.tmp`, which the scanner skips."""
    for _ in range(100):
        tmp = f".{name}.{secrets.token_hex(4)}.tmp"
        try:
            return tmp, os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0),
                                0o600, dir_fd=fd)
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", name)


def _write_all(fd: int, data: bytes) -> None:
    _write_out(fd, data)
    os.fsync(fd)


def _write_out(fd: int, data: bytes | memoryview) -> None:
    """Every byte of `data` written to `fd` (a write may take fewer than it is given)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


_COPY_PIECE = 1 << 22  # bytes read and written at a time where the kernel cannot copy a file itself


def _copy_file(source: IO[bytes], fd: int) -> None:
    """The whole contents of the file `source` (from its start, whatever its position)
    written to `fd` at its position: by `os.copy_file_range` (no copy through this process)
    where the kernel and file system can, else (or from where it stopped) read and written."""
    source.flush()
    src = source.fileno()
    size = os.fstat(src).st_size
    done = 0
    copy = getattr(os, "copy_file_range", None)
    while copy is not None and done < size:
        try:
            copied = copy(src, fd, size - done, done)
        except OSError:  # (not across file systems, nor on every kernel or file system)
            break
        if copied <= 0:
            break
        done += copied
    while done < size:
        piece = os.pread(src, min(_COPY_PIECE, size - done), done)
        if not piece:
            raise OSError(errno.EIO, f"a spool ended at {done} of its {size} bytes")
        _write_out(fd, piece)
        done += len(piece)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# What a file memtui may rewrite (a memory file, a client config, `.gitattributes`, an undo
# target) may hold for `read_if_exists`: the check that it did not change reads it whole.
MAX_REWRITTEN_BYTES = 16 * 1024 * 1024


def read_if_exists(path: Path, limit: int = MAX_REWRITTEN_BYTES) -> bytes | None:
    """The bytes of the regular file `path` (`read_regular`: a FIFO, device or socket is
    refused without blocking, at most `limit` bytes), or None when nothing is there."""
    return read_regular_if_exists(path, limit)


def atomic_write_bytes(path: Path, data: bytes, expected: bytes | None | str = "any", *, root: Path | None = None) -> None:
    """Write `data` to `path` atomically, inside the folder reached from `root` without a
    symlink (`open_below`; without `root`, from `path`'s own folder).

    `expected` is what the caller read before deciding to write: the bytes (or None for
    "the file must not exist"); the write is refused with ConflictError when the file on
    disk is no longer that. Pass "any" to skip the check.

    Another program (Muse) may append to the file without taking memtui's lock. The check
    reads the file through a descriptor that is kept open across the rename: if the old
    file grew after the check (an append that landed between check and rename, and would
    otherwise be lost with the replaced file), the appended bytes are added to the new
    version; if it changed in any other way, the other writer's version is put back and
    the write is refused.
    """
    start, parts = _parts(path, root)
    name = path.name
    old_fd: int | None = None
    with open_below(start, parts, create=True) as folder:
        try:
            st = os.stat(name, dir_fd=folder, follow_symlinks=False)
            mode = st.st_mode & 0o7777 if stat.S_ISREG(st.st_mode) else None
        except FileNotFoundError:
            mode = None
        tmp, fd = _temp_in(folder, name)
        try:
            try:
                _write_all(fd, data)
                if mode is not None:
                    os.fchmod(fd, mode)
            finally:
                os.close(fd)
            if expected != "any":
                # Checked as late as possible, right before the rename, through a descriptor that
                # outlives it (see below).
                try:
                    old_fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0),
                                     dir_fd=folder)
                except FileNotFoundError:
                    old_fd = None
                except OSError as exc:
                    if exc.errno != errno.ELOOP:
                        raise
                    raise ConflictError(f"{path} became a symlink since it was read; not overwritten") from None
                current = None if old_fd is None else _read_fd(old_fd)
                if current != expected:
                    raise ConflictError(f"{path} changed on disk since it was read; not overwritten")
            os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            if old_fd is not None:
                os.close(old_fd)
            try:
                os.unlink(tmp, dir_fd=folder)
            except FileNotFoundError:
                pass
            raise
        _fsync_fd(folder)
    if old_fd is not None:
        try:
            _keep_late_appends(path, old_fd, expected if isinstance(expected, bytes) else b"", data, root)
        finally:
            os.close(old_fd)


def atomic_write_parts(path: Path, parts: Iterable[bytes | memoryview | IO[bytes]], *, root: Path | None = None) -> None:
    """Write the bytes of `parts`, one after the other, to `path` atomically (temporary file,
    fsync, rename), never joined in memory: a file of hundreds of megabytes made piece by
    piece. A part that is a file (a spool) gives its whole contents, copied by the kernel
    where it can (`_copy_file`). An exception from `parts` leaves the old file as it was and
    no temporary file."""
    start, dirs = _parts(path, root)
    name = path.name
    with open_below(start, dirs, create=True) as folder:
        tmp, fd = _temp_in(folder, name)
        try:
            try:
                for piece in parts:
                    if isinstance(piece, (bytes, bytearray, memoryview)):
                        _write_out(fd, piece)
                    else:
                        _copy_file(piece, fd)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=folder)
            except FileNotFoundError:
                pass
            raise
        _fsync_fd(folder)


def spool_below(folder_path: Path, root: Path) -> IO[bytes]:
    """A new private temporary file (read and write) in the folder `folder_path`, reached from
    `root` without a symlink, that has no name: it is gone once closed (or the process is)."""
    start, dirs = _parts(folder_path / "spool", root)
    with open_below(start, dirs, create=True) as folder:
        unnamed, fd = getattr(os, "O_TMPFILE", 0), -1
        if unnamed:
            try:
                fd = os.open(".", os.O_RDWR | unnamed | getattr(os, "O_CLOEXEC", 0), 0o600, dir_fd=folder)
            except OSError:
                fd = -1
        if fd < 0:  # a file system without unnamed files: a named one, unlinked at once
            tmp, fd = _temp_in(folder, "spool")
            os.close(fd)
            fd = os.open(tmp, os.O_RDWR | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), dir_fd=folder)
            os.unlink(tmp, dir_fd=folder)
    return os.fdopen(fd, "w+b")


def create_new_bytes(path: Path, data: bytes, *, root: Path | None = None) -> None:
    """Create `path` holding `data` (inside the folder reached from `root` without a symlink):
    temporary file in the same folder, fsync, then a hard link into place, which fails
    (FileExistsError) when the name exists, so an existing file is never replaced. On a file
    system without hard links: check, then rename."""
    start, parts = _parts(path, root)
    name = path.name
    with open_below(start, parts, create=True) as folder:
        tmp, fd = _temp_in(folder, name)
        try:
            try:
                _write_all(fd, data)
            finally:
                os.close(fd)
            try:
                os.link(tmp, name, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
            except FileExistsError:
                raise
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
                    raise
                if _exists_at(folder, name):
                    raise FileExistsError(errno.EEXIST, "file exists", str(path)) from None
                os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
        finally:
            try:
                os.unlink(tmp, dir_fd=folder)
            except FileNotFoundError:
                pass
        _fsync_fd(folder)


def remove_below(path: Path, root: Path, missing_ok: bool = True) -> None:
    """Remove the file (or link) `path`, named inside its folder reached from `root` without a symlink."""
    start, parts = _parts(path, root)
    try:
        with open_below(start, parts) as folder:
            os.unlink(path.name, dir_fd=folder)
    except FileNotFoundError:
        if not missing_ok:
            raise


def make_dirs_below(path: Path, root: Path, mode: int = 0o777) -> None:
    """Create the folder `path` (the root itself, or below it) and the missing folders between."""
    if path == root:
        os.makedirs(root, mode=mode, exist_ok=True)
        return
    with open_below(root, path.relative_to(root).parts, create=True, mode=mode):
        pass


def remove_dir_below(path: Path, root: Path) -> None:
    """Remove the empty folder `path` (the root itself, or a folder below it)."""
    if path == root:
        os.rmdir(root)
        return
    start, parts = _parts(path, root)
    with open_below(start, parts) as folder:
        os.rmdir(path.name, dir_fd=folder)


def remove_tree_below(path: Path, root: Path) -> None:
    """Remove the folder `path` below `root` and what is in it (links inside are removed, not
    followed); nothing when it is missing or not a folder, or when a folder on its way is a link."""
    start, parts = _parts(path, root)
    try:
        with open_below(start, parts) as folder:
            try:
                st = os.stat(path.name, dir_fd=folder, follow_symlinks=False)
            except FileNotFoundError:
                return
            if stat.S_ISDIR(st.st_mode):
                remove_tree_at(folder, path.name)
    except (FileNotFoundError, LinkRace):
        return


def remove_tree_at(parent: int, name: str) -> None:
    """Remove the folder `name` of the folder open as `parent`, and what is in it, as far as it
    can (what cannot be removed stays, silently). A link inside is removed, never followed.
    Iterative, with one descriptor open at a time: down into a child folder with O_NOFOLLOW,
    back up through `..` (checked to be the folder it came from), so no nesting is too deep
    (`shutil.rmtree` recurses: 1,100 nested folders raise RecursionError; SPEC §8). Each
    folder is read once for its child folders (kept by name, not open) and once more when
    they are done, for what appeared meanwhile: linear in a folder's width too."""
    try:
        fd = os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=parent)
    except OSError:
        return
    top = os.fstat(parent)
    Id = tuple[int, int]
    # each folder entered: its name, its parent's id, the child folders its parent has left
    trail: list[tuple[str, Id, list[tuple[str, Id]]]] = [(name, (top.st_dev, top.st_ino), [])]
    stuck: set[Id] = set()  # folders that could not be emptied: not entered again
    todo, fresh = _child_folders(fd, stuck), True
    while True:
        if not todo and not fresh:  # the children read before are done: anything new?
            todo, fresh = _child_folders(fd, stuck), True
            continue
        if todo:
            child, ident = todo.pop()
            if ident in stuck:
                continue
            try:
                below = os.open(child, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
            except OSError:
                stuck.add(ident)
                continue
            here = os.fstat(fd)
            os.close(fd)
            fd = below
            trail.append((child, (here.st_dev, here.st_ino), todo))
            todo, fresh = _child_folders(fd, stuck), True
            continue
        done, parent_id, todo = trail.pop()
        fresh = False
        here = os.fstat(fd)
        if not trail:
            os.close(fd)
            try:
                os.rmdir(done, dir_fd=parent)
            except OSError:
                pass
            return
        try:
            up = os.open("..", _DIR_FLAGS, dir_fd=fd)
        except OSError:
            return
        finally:
            os.close(fd)
        above = os.fstat(up)
        if (above.st_dev, above.st_ino) != parent_id:  # moved away meanwhile: stop here
            os.close(up)
            return
        fd = up
        try:
            os.rmdir(done, dir_fd=fd)
        except OSError:
            stuck.add((here.st_dev, here.st_ino))


def _child_folders(fd: int, stuck: set[tuple[int, int]]) -> list[tuple[str, tuple[int, int]]]:
    """The folder open as `fd` read once: every file and link in it removed, its child
    folders (not in `stuck`) returned by name and id, last first (they are popped)."""
    folders: list[tuple[str, tuple[int, int]]] = []
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                try:
                    if not entry.is_dir(follow_symlinks=False):
                        os.unlink(entry.name, dir_fd=fd)
                        continue
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if (info.st_dev, info.st_ino) not in stuck:
                    folders.append((entry.name, (info.st_dev, info.st_ino)))
    except OSError:
        pass
    folders.reverse()
    return folders


def walk(top: str | os.PathLike[str],
         onerror: Callable[[OSError], None] | None = None) -> Iterator[tuple[str, list[str], list[str]]]:
    """`os.walk(top, followlinks=False)` (top down; prune by editing the folder names in
    place) with a stack of its own: Python 3.11's recurses, so 1,100 nested folders that a
    repository ships raise RecursionError there (SPEC §8: folder walks are iterative)."""
    stack = [os.fspath(top)]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as entries:
                children = list(entries)
        except OSError as exc:
            if onerror is not None:
                onerror(exc)
            continue
        dirs: list[str] = []
        files: list[str] = []
        for entry in children:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            (dirs if is_dir else files).append(entry.name)
        yield folder, dirs, files
        for name in reversed(dirs):
            below = os.path.join(folder, name)
            if not os.path.islink(below):
                stack.append(below)


def _exists_at(folder: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _fsync_fd(fd: int) -> None:
    try:
        os.fsync(fd)
    except OSError:
        pass


def _read_fd(fd: int) -> bytes:
    chunks: list[bytes] = []
    offset = 0
    while True:
        chunk = os.pread(fd, 1 << 20, offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)


def _keep_late_appends(path: Path, old_fd: int, expected: bytes, data: bytes, root: Path | None) -> None:
    """After the rename: did the replaced file change after it was checked?"""
    late = _read_fd(old_fd)
    if late == expected:
        return
    if late.startswith(expected):  # an append: it belongs after our version, as if it came later
        merged = data + late[len(expected):]
        atomic_write_bytes(path, merged, expected=data, root=root)
        return
    atomic_write_bytes(path, late, expected=data, root=root)  # rewritten meanwhile: theirs wins, ours is refused
    raise ConflictError(f"{path} changed on disk while it was being written; your change was not kept")


# ---------------------------------------------------------------- reading untrusted files
