"""The one bounded reader (SPEC §8 "One bounded reader"): every file a repository or another
program can put in memtui's way is read by `read_regular` (or opened by `open_regular`, for a
reader that maps it): a regular file only, at most its size limit, never blocking. Writing is
`fileio`'s (below a root, atomic, never through a link)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


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


def open_regular(path: str | os.PathLike[str], limit: int, *, follow_symlinks: bool = True) -> int:
    """A read-only descriptor for `path`, which must be a regular file of at most `limit`
    bytes (the caller closes it); for readers that map a file rather than read it whole (the
    prepared index, the vector cache). The checks of `read_regular`, which is built on it."""
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
        _refuse_mode(path, os.fstat(fd), limit)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: str | os.PathLike[str], limit: int, *, follow_symlinks: bool = True) -> bytes:
    """The bytes of `path`, which must be a regular file of at most `limit` bytes: the one
    reader of every file a repository or another program can put in memtui's way (SPEC §8
    "One bounded reader"; tests/core/test_bounded_reader.py lists every other read).

    Safe on anything a cloned repository can ship: the type is checked with stat() before
    opening (a FIFO, socket or device is never opened), then the file is opened with
    O_NONBLOCK (a FIFO swapped in meanwhile cannot block), O_NOCTTY and, when
    `follow_symlinks` is false, O_NOFOLLOW; the open descriptor is checked again with
    fstat(), and at most `limit + 1` bytes are read, so a file that grows (or a device such
    as /dev/zero) can never make memtui read more than that.

    Raises NotRegularFileError or FileTooLargeError (both RefusedFileError, an OSError with
    a plain `reason`), FileNotFoundError when it is missing, and other OSErrors as raised.
    """
    fd = open_regular(path, limit, follow_symlinks=follow_symlinks)
    try:
        # First ask for the size fstat() gave plus one byte (no 1 MiB buffer for a 1 KiB
        # file), then in small chunks until the end, never past limit + 1 bytes in all.
        wanted = limit + 1
        ask = min(wanted, os.fstat(fd).st_size + 1)
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


def read_regular_tail(path: str | os.PathLike[str], size: int) -> bytes:
    """The last `size` bytes (at most) of `path`, which must be a regular file, read with the
    checks of `read_regular` (never a FIFO or device, never blocking): a log another program
    keeps growing (an assistant's transcript) is read from its end, whatever its length."""
    st = os.stat(path)
    _refuse_mode(path, st, st.st_size)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        _refuse_mode(path, st, st.st_size)
        start = max(0, st.st_size - size)
        return os.pread(fd, min(size, st.st_size), start)
    finally:
        os.close(fd)


def read_regular_if_exists(path: str | os.PathLike[str], limit: int, *, follow_symlinks: bool = True) -> bytes | None:
    """`read_regular`, or None when nothing is at `path` (a dangling symlink counts as nothing
    only when symlinks are followed)."""
    try:
        return read_regular(path, limit, follow_symlinks=follow_symlinks)
    except FileNotFoundError:
        return None
