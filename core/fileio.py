"""Atomic, checked writes (SPEC §8): temp file in the same directory, fsync, rename."""

from __future__ import annotations

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
    """
    directory = path.parent
    directory.mkdir(parents=True, exist_ok=True)
    try:
        mode = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        # Checked as late as possible, right before the rename, to keep the window in which
        # another writer's change could be replaced as small as the file system allows.
        if expected != "any" and read_if_exists(path) != expected:
            raise ConflictError(f"{path} changed on disk since it was read; not overwritten")
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    fsync_dir(directory)


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


class NotRegularFile(OSError):
    """A path that is not a regular file, or is over the size limit: never read."""


def read_regular(path: Path, limit: int) -> bytes:
    """Read a regular file of at most `limit` bytes. Opened non-blocking and checked on the
    open descriptor, so a FIFO, device or socket is never read from (and never hangs)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile("not a regular file")
        if st.st_size > limit:
            raise NotRegularFile(f"{st.st_size} bytes, over the {limit}-byte limit")
        chunks = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:
            raise NotRegularFile(f"over the {limit}-byte limit")
        return data
    finally:
        os.close(fd)
