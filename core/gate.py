"""The one write gate (SPEC §1, §8): every file memtui writes, removes or creates a folder
for passes here before it touches the disk.

A caller names the target and the root it is meant for (a memory root, the workspace's
`.muse`, the Muse home, an export folder). The gate refuses, with the path and the reason,
when

- the target is not below that root (or names `..`),
- any component of the path below the root is a symlink (a repository can ship
  `.muse/memory/imported -> /anywhere` or `.claude -> ~`), or is not a folder,
- the root itself leads out of its `container` (a `.muse -> /anywhere` link; the user's
  own memory folder may link anywhere, so the user layer passes its root as container),
- the data is not allowed for its kind: a memory file must stay a file memtui reads (UTF-8,
  no NUL, at most 1 MiB, frontmatter that loads) and new memory text must hold no NUL or
  other C0 control but tab and newline (`check_text`).

Only then does it call the low-level primitives of `fileio`; no other module calls those
(tests/core/test_gate.py lists every call of a write primitive in memtui's source). Those
walk from the root to the target's folder by descriptor, one component at a time and never
through a symlink, so a folder swapped for a link after the check is refused too.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import IO

from . import fileio
from .display import path_text

MAX_MEMORY_BYTES = 1024 * 1024  # SPEC §1: memtui skips files over 1 MiB, so it never writes one


class Kind(Enum):
    """What is written, which decides the data checks."""

    MEMORY = "memory"  # a Markdown memory file: must stay one memtui reads
    SETTINGS = "settings"  # a JSON settings file: UTF-8, at most 1 MiB (SPEC §8)
    TEXT = "text"  # a text file for another tool (export): UTF-8, no NUL
    DATA = "data"  # memtui's own records (trash, undo log, caches): bytes as they are


class Refused(OSError):
    """The gate refused a write; nothing was written. `path` and `reason` say what and why;
    `str()` is one sentence for a person."""

    def __init__(self, path: str | os.PathLike[str], reason: str):
        super().__init__(0, reason, os.fspath(path))
        self.path = Path(path)
        self.reason = reason

    def __str__(self) -> str:
        return f"{path_text(str(self.path))}: {self.reason}; nothing was written"


class TextRefused(ValueError):
    """New memory text that memtui will not write (a NUL or other control character, too
    long); the message says why."""


def check_text(text: str, what: str = "the text") -> None:
    """SPEC §1: text that goes into a memory holds no NUL or other C0 control character
    except tab and newline, and cannot by itself push a file past the 1 MiB read limit.
    Raises TextRefused naming the first offending character and its position."""
    for i, ch in enumerate(text):
        if ch < " " and ch not in "\t\n":
            name = "NUL" if ch == "\x00" else f"control character U+{ord(ch):04X}"
            raise TextRefused(f"{what} holds a {name} at character {i + 1}; memtui writes no control "
                              "characters but tab and newline into a memory")
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_MEMORY_BYTES:
        raise TextRefused(f"{what} is {size} bytes, over the 1 MiB limit of a memory file")


def clean_text(text: str, what: str = "the text") -> str:
    """New memory text as it is written: Windows line ends made `\n`, outer whitespace
    stripped, then `check_text`ed."""
    text = text.replace("\r\n", "\n").strip()
    check_text(text, what)
    return text


def check_data(path: Path, data: bytes, kind: Kind) -> None:
    """The data checks of `write` alone (Refused naming `path`)."""
    if kind is Kind.DATA:
        return
    if kind in (Kind.MEMORY, Kind.SETTINGS) and len(data) > MAX_MEMORY_BYTES:
        raise Refused(path, f"the result would be {len(data)} bytes, over the 1 MiB limit memtui reads "
                            "(memtui would then skip the file)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused(path, "the result would not be UTF-8 text") from None
    if kind in (Kind.MEMORY, Kind.TEXT) and "\x00" in text:
        raise Refused(path, "the result would hold a NUL byte (memtui would then skip the file as binary)")
    if kind is Kind.MEMORY:
        from . import markdown as md

        try:  # the body always parses; the frontmatter is what can make memtui skip a file
            md.parse_frontmatter(text, md.split_lines(text))
        except md.MemoryFileError as exc:
            raise Refused(path, f"the result would not read as a memory file ({exc})") from None


def _root_problem(root: Path, container: Path | None) -> str | None:
    if container is None or root == container:
        return None
    from .paths import root_reason

    return root_reason(root, container)


def target(path: Path, root: Path, container: Path | None = None, *, root_itself: bool = False) -> Path:
    """`path`, checked: below `root` (or, with `root_itself`, the root itself), no symlink
    (and nothing but folders) on its way below the root, and the root inside `container`
    when given. Raises Refused."""
    path, root = Path(path), Path(root)
    if not root.is_absolute() or not path.is_absolute():
        raise Refused(path, "memtui writes only by absolute path")
    try:
        rel = path.relative_to(root)
    except ValueError:
        raise Refused(path, f"is not inside {path_text(str(root))}, where it is meant to be") from None
    if (not rel.parts and not root_itself) or ".." in rel.parts:
        raise Refused(path, f"is not a file inside {path_text(str(root))}")
    reason = _root_problem(root, container)
    if reason is not None:
        raise Refused(root, reason)
    current = root
    for i, part in enumerate(rel.parts):
        current = current / part
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            break  # nothing further down exists yet: what is created is below the root
        except NotADirectoryError:
            raise Refused(path, f"{path_text(str(current.parent))} is not a folder") from None
        except OSError as exc:
            raise Refused(path, f"cannot check {path_text(str(current))}: {exc.strerror or exc}") from None
        if stat.S_ISLNK(st.st_mode):
            where = path_text(current.relative_to(root).as_posix())
            try:
                dest = f" to {path_text(os.readlink(current))}"
            except OSError:
                dest = ""
            raise Refused(path, f"{where} is a symlink{dest}; memtui never writes through a link "
                                f"below {path_text(str(root))}")
        if i < len(rel.parts) - 1 and not stat.S_ISDIR(st.st_mode):
            raise Refused(path, f"{path_text(str(current))} is not a folder")
    return path


def check(path: Path, data: bytes | None, *, root: Path, kind: Kind, container: Path | None = None) -> Path:
    """Everything `write` checks (or `remove`, with None), without writing: so a change of
    several files is refused whole before any of them is touched."""
    checked = target(path, root, container)
    if data is not None:
        check_data(checked, data, kind)
    return checked


@contextmanager
def _no_race(path: Path) -> Iterator[None]:
    """A folder that became a symlink between the check and the write is refused like one
    that was a symlink at the check: the primitives walk by descriptor and never follow it."""
    try:
        yield
    except fileio.LinkRace as exc:
        raise Refused(path, f"{path_text(str(exc.path))} became a symlink (or stopped being a folder) while "
                            "memtui was writing; memtui never writes through a link") from None


def write(path: Path, data: bytes, *, root: Path, kind: Kind, container: Path | None = None,
          expected: bytes | None | str = "any") -> None:
    """Write `data` to `path` atomically (temporary file, fsync, rename) after the checks;
    `expected` as in `fileio.atomic_write_bytes` (ConflictError when the file changed)."""
    checked = target(path, root, container)
    check_data(checked, data, kind)
    with _no_race(checked):
        fileio.atomic_write_bytes(checked, data, expected=expected, root=root)


def write_parts(path: Path, parts: Iterable[bytes | memoryview | IO[bytes]], *, root: Path,
                container: Path | None = None) -> None:
    """Write memtui's own data (`Kind.DATA`: bytes as they are) to `path` atomically, as
    `write` does, from `parts` written one after the other as they come (a large cache file
    made piece by piece, never held whole; a part that is a `spool` gives its whole
    contents); an exception from `parts` writes nothing."""
    checked = target(path, root, container)
    with _no_race(checked):
        fileio.atomic_write_parts(checked, parts, root=root)


def spool(folder: Path, *, root: Path, container: Path | None = None) -> IO[bytes]:
    """A private temporary file without a name in `folder` (made when missing), for memtui's
    own data on its way into a file `write_parts` writes; gone when closed."""
    checked = target(folder, root, container, root_itself=True)
    with _no_race(checked):
        return fileio.spool_below(checked, root)


def create(path: Path, data: bytes, *, root: Path, kind: Kind, container: Path | None = None) -> None:
    """Create `path` with `data`; FileExistsError when something is already there (never
    replaced, checked at the final link)."""
    checked = target(path, root, container)
    check_data(checked, data, kind)
    with _no_race(checked):
        fileio.create_new_bytes(checked, data, root=root)


def remove(path: Path, *, root: Path, container: Path | None = None, missing_ok: bool = True) -> None:
    """Remove the file `path` (never through a link on its way)."""
    checked = target(path, root, container)
    with _no_race(checked):
        fileio.remove_below(checked, root, missing_ok=missing_ok)


def make_dir(path: Path, *, root: Path, container: Path | None = None, mode: int = 0o777) -> None:
    """Create the folder `path` (which may be the root itself) and its missing parents."""
    checked = target(path, root, container, root_itself=True)
    with _no_race(checked):
        fileio.make_dirs_below(checked, root, mode=mode)


def remove_dir(path: Path, *, root: Path, container: Path | None = None) -> None:
    """Remove the folder `path` (which may be the root itself) when it is empty (OSError otherwise)."""
    checked = target(path, root, container, root_itself=True)
    with _no_race(checked):
        fileio.remove_dir_below(checked, root)


def remove_tree(path: Path, *, root: Path, container: Path | None = None) -> None:
    """Remove the folder `path` and what is in it (a link inside is removed, not followed)."""
    fileio.remove_tree_below(target(path, root, container), root)
