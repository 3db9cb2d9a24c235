"""Other assistants' memory formats (SPEC §9): pure translation to and from a neutral record.

Readers turn an outside format into `Memory` records and report every file they could not
use as an `ImportProblem` (path + reason); they never raise for bad input and never write
into memtui's store. Writers turn records into the outside layout, write each file
atomically and refuse to replace a file that already exists; `layout` gives the files
without writing them (what export syncs). Deduplication, dry runs,
counts and writing into the store belong to the caller (`core/actions.py`).

    read(fmt, path, workspace, user_home) -> ReadResult
    write(fmt, memories, dest) -> list[Path]
    default_source(fmt, workspace, user_home) -> Path
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from ..model import LAYERS, Entry, Layer, Record  # noqa: F401  (LAYERS re-exported: the layers a record may name)

_MODULES = {  # format name -> its module here, in the order `import --help` and errors list them
    "claude-code": "claude_code",
    "agents-md": "agents_md",
    "cursor": "cursor",
    "cline": "cline",
    "jsonl": "jsonl",
}
FORMATS: tuple[str, ...] = tuple(_MODULES)


@dataclass(frozen=True, slots=True, kw_only=True)
class Memory(Record):
    """One memory in no particular format: what it says (`Record`'s fields; only `text` is
    required, and it alone may be given by position), and where it comes from and goes.

    `updated_at` may be unknown (None); `origin` is the file it was read from; `path` the
    memtui file it lives in (relative to its layer root, for jsonl); `extra` holds what only
    one format knows (Claude Code's `type`, Cursor's `globs`/`alwaysApply`, the source file
    of an entry, ...).
    """

    id: str = ""
    layer: Layer = Layer.PROJECT
    updated_at: float | None = None  # seconds since the epoch, UTC
    origin: str = ""
    extra: dict[str, Any] = field(default_factory=dict, hash=False)
    conversation_id: str | None = None
    conversation_title: str = ""
    path: str = ""
    raw_status: str = ""  # a status the source wrote other than active/archived (`status` is what it means)


@dataclass(frozen=True)
class ImportProblem:
    """A file (or a line of one) that could not be read; `reason` never quotes memory text."""

    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass(frozen=True)
class BackupFile:
    """A memory file whole, as the jsonl backup carries it: its layer, its path relative to
    that layer's root (POSIX separators) and its exact text."""

    layer: str
    path: str
    text: str


@dataclass(frozen=True)
class SourceText:
    """A source file as it was read, so an import can keep it whole: `head` is its frontmatter
    block exactly (fences included; "" without one), `body` everything after it, `rel` its
    name relative to the folder read (the file name it goes back to on export)."""

    head: str
    body: str
    rel: str
    keep: dict[str, Any] = field(default_factory=dict, hash=False)  # more the format keeps about the file


@dataclass
class ReadResult:
    memories: list[Memory] = field(default_factory=list)
    problems: list[ImportProblem] = field(default_factory=list)
    # the jsonl backup only: whole files, conversations and conversation rows as stored
    files: list[BackupFile] = field(default_factory=list)
    conversations: list[dict[str, Any]] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    # the entries the person had accepted (SPEC §12), each as (layer, the file's path relative
    # to its layer root or the row's id, sha256 of the entry's text, its occurrence in the file)
    reviewed: list[tuple[str, str, str, int]] = field(default_factory=list)
    # entries that are a tool's boilerplate rather than knowledge ("This file provides guidance to ...")
    boilerplate: list[Memory] = field(default_factory=list)
    # origin -> the source file whole, for every file whose memories are all in `memories`
    sources: dict[str, SourceText] = field(default_factory=dict)


class InteropError(Exception):
    """A request that cannot be carried out at all (unknown format, refused write)."""


class WriteRefused(InteropError):
    """An export would replace existing files (or cannot be written); nothing was written."""

    def __init__(self, message: str, paths: Iterable[Path] = ()):
        super().__init__(message)
        self.paths = list(paths)


class _Format(Protocol):
    """What every format module provides (imported on first use, by name)."""

    def default_source(self, workspace: Path, user_home: Path) -> Path: ...
    def read(self, source: Path) -> ReadResult: ...
    def layout(self, memories: list[Memory], dest: Path, name: Callable[[str], str] = str) -> dict[Path, str]: ...


if TYPE_CHECKING:  # each module named in _MODULES is a _Format: mypy checks it here
    from . import agents_md, claude_code, cline, cursor, jsonl

    _FORMAT_MODULES: tuple[_Format, ...] = (claude_code, agents_md, cursor, cline, jsonl)


def _module(fmt: str) -> _Format:
    try:
        name = _MODULES[fmt]
    except KeyError:
        raise InteropError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}") from None
    return cast(_Format, importlib.import_module(f"{__name__}.{name}"))


def default_source(fmt: str, workspace: Path, user_home: Path) -> Path:
    """Where `fmt` keeps its memories for this workspace (`user_home` is the user's `~`)."""
    return _module(fmt).default_source(Path(workspace), Path(user_home))


def read(fmt: str, path: Path | None, workspace: Path, user_home: Path) -> ReadResult:
    """Read memories in `fmt` from `path` (a file or folder; None: `default_source`)."""
    module = _module(fmt)
    source = Path(path) if path is not None else module.default_source(Path(workspace), Path(user_home))
    return module.read(source)


def layout(fmt: str, memories: Iterable[Memory], dest: Path, name: Callable[[str], str] = str) -> dict[Path, str]:
    """The files `memories` make in `fmt` under `dest` (path -> text), nothing written. Every
    file and folder name the writer makes up passes through `name` (the outbound gate)."""
    return _module(fmt).layout(list(memories), Path(dest), name)


def one_file(fmt: str) -> bool:
    """Whether `fmt` writes one file (an export's record is then about that file, not its folder)."""
    return bool(getattr(_module(fmt), "ONE_FILE", False))


def adopt(fmt: str) -> Callable[[str, bytes, bytes, frozenset[str]], str] | None:
    """The format's rule for a file at the destination memtui did not write but may take over
    (see `sync.plan`), or None: every such file is left alone."""
    return getattr(_module(fmt), "adopt", None)


def write(fmt: str, memories: Iterable[Memory], dest: Path) -> list[Path]:
    """Write `memories` in `fmt` under `dest` and return the files written.

    Raises WriteRefused, writing nothing, when any file it would write already exists
    (`core/transfer.py` exports as a sync instead, through `layout`).
    """
    from ._files import write_all

    return write_all(layout(fmt, memories, dest))


def memory_from_entry(entry: Entry, origin: str = "") -> Memory:
    """A `Memory` from a store entry: its `Record` fields as they are."""
    said = {f.name: getattr(entry, f.name) for f in fields(Record)}
    return Memory(**said, updated_at=entry.updated_at, origin=origin, conversation_id=entry.conversation_id,
                  conversation_title=entry.conversation_title, path=entry.rel_path)


__all__ = [
    "FORMATS", "BackupFile", "ImportProblem", "SourceText", "InteropError", "Memory", "ReadResult", "WriteRefused", "default_source",
    "memory_from_entry", "read", "write",
]
