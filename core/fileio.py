"""Atomic, checked writes (SPEC §8): temp file in the same directory, fsync, rename."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import tempfile
from pathlib import Path


class ConflictError(RuntimeError):
    """The file changed on disk since memtui read it; nothing was written."""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_if_exists(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def atomic_write_bytes(path: Path, data: bytes, expected: bytes | None | str = "any") -> None:
    """Write `data` to `path` atomically.

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
    directory = path.parent
    directory.mkdir(parents=True, exist_ok=True)
    try:
        mode = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    old_fd: int | None = None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        if expected != "any":
            # Checked as late as possible, right before the rename, through a descriptor that
            # outlives it (see below).
            try:
                old_fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
            except FileNotFoundError:
                old_fd = None
            current = None if old_fd is None else _read_fd(old_fd)
            if current != expected:
                raise ConflictError(f"{path} changed on disk since it was read; not overwritten")
        os.replace(tmp, path)
    except BaseException:
        if old_fd is not None:
            os.close(old_fd)
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    if old_fd is not None:
        try:
            _keep_late_appends(path, old_fd, expected if isinstance(expected, bytes) else b"", data)
        finally:
            os.close(old_fd)
    fsync_dir(directory)


def create_new_bytes(path: Path, data: bytes) -> None:
    """Create `path` holding `data`: temporary file in the same folder, fsync, then a hard
    link into place, which fails (FileExistsError) when the name exists, so an existing file
    is never replaced. On a file system without hard links: check, then rename."""
    directory = path.parent
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
                raise
            if os.path.lexists(path):
                raise FileExistsError(errno.EEXIST, "file exists", str(path)) from None
            os.replace(tmp, path)
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
    fsync_dir(directory)


def _read_fd(fd: int) -> bytes:
    chunks: list[bytes] = []
    offset = 0
    while True:
        chunk = os.pread(fd, 1 << 20, offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)


def _keep_late_appends(path: Path, old_fd: int, expected: bytes, data: bytes) -> None:
    """After the rename: did the replaced file change after it was checked?"""
    late = _read_fd(old_fd)
    if late == expected:
        return
    if late.startswith(expected):  # an append: it belongs after our version, as if it came later
        merged = data + late[len(expected):]
        atomic_write_bytes(path, merged, expected=data)
        return
    atomic_write_bytes(path, late, expected=data)  # rewritten meanwhile: theirs wins, ours is refused
    raise ConflictError(f"{path} changed on disk while it was being written; your change was not kept")


def fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# ---------------------------------------------------------------- reading untrusted files


class RefusedFileError(OSError):
    """memtui will not read this file. `reason` (also `str(exc)` and `strerror`) says why in
    plain words, e.g. "is a FIFO (named pipe), not a regular file"; `path` is the file.

    An OSError, so a caller that already reports `cannot read: <strerror>` reports this too.
    """

    def __init__(self, path: str | os.PathLike[str], reason: str, code: int = errno.EINVAL):
        super().__init__(code, reason, os.fspath(path))
        self.path = Path(path)
        self.reason = reason

    def __str__(self) -> str:
        return self.reason


class NotRegularFileError(RefusedFileError):
    """A FIFO, socket, device or directory where a regular file was expected."""


class FileTooLargeError(RefusedFileError):
    """A file over the caller's size limit."""


NotRegularFile = RefusedFileError  # the name the scanner catches: either refusal


def file_kind(mode: int) -> str:
    """A plain name for the type of file `mode` (from stat) describes."""
    if stat.S_ISREG(mode):
        return "a regular file"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


def _refuse_mode(path: str | os.PathLike[str], st: os.stat_result, limit: int) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise NotRegularFileError(path, f"is {file_kind(st.st_mode)}, not a regular file")
    if st.st_size > limit:
        raise FileTooLargeError(path, f"is {st.st_size} bytes, over the {_size(limit)} limit", errno.EFBIG)


def _size(limit: int) -> str:
    if limit >= 1024 * 1024 and limit % (1024 * 1024) == 0:
        return f"{limit // (1024 * 1024)} MiB"
    if limit >= 1024 and limit % 1024 == 0:
        return f"{limit // 1024} KiB"
    return f"{limit}-byte"


def read_regular(path: str | os.PathLike[str], limit: int, *, follow_symlinks: bool = True) -> bytes:
    """The bytes of `path`, which must be a regular file of at most `limit` bytes.

    Safe on anything a cloned repository can ship: the type is checked with stat() before
    opening (a FIFO, socket or device is never opened), then the file is opened with
    O_NONBLOCK (a FIFO swapped in meanwhile cannot block), O_NOCTTY and, when
    `follow_symlinks` is false, O_NOFOLLOW; the open descriptor is checked again with
    fstat(), and at most `limit + 1` bytes are read, so a file that grows (or a device such
    as /dev/zero) can never make memtui read more than that.

    Raises NotRegularFileError or FileTooLargeError (both RefusedFileError, an OSError with
    a plain `reason`), FileNotFoundError when it is missing, and other OSErrors as raised.
    """
    st = os.stat(path, follow_symlinks=follow_symlinks)
    _refuse_mode(path, st, limit)
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
    if not follow_symlinks:
        flags |= os.O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if not follow_symlinks and exc.errno == errno.ELOOP:
            raise NotRegularFileError(path, "is a symbolic link, not followed", errno.ELOOP) from None
        raise
    try:
        st = os.fstat(fd)
        _refuse_mode(path, st, limit)
        # First ask for the size fstat() gave plus one byte (no 1 MiB buffer for a 1 KiB
        # file), then in small chunks until the end, never past limit + 1 bytes in all.
        wanted = limit + 1
        ask = min(wanted, st.st_size + 1)
        chunks: list[bytes] = []
        while wanted > 0:
            chunk = os.read(fd, ask)
            if not chunk:
                break
            chunks.append(chunk)
            wanted -= len(chunk)
            ask = min(wanted, 64 * 1024)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise FileTooLargeError(path, f"is over the {_size(limit)} limit", errno.EFBIG)
    return data


def read_regular_if_exists(path: str | os.PathLike[str], limit: int, *, follow_symlinks: bool = True) -> bytes | None:
    """`read_regular`, or None when nothing is at `path` (a dangling symlink counts as nothing
    only when symlinks are followed)."""
    try:
        return read_regular(path, limit, follow_symlinks=follow_symlinks)
    except FileNotFoundError:
        return None
