"""Reading one version of the file git hands over as a sequence of tokens (see the package's
docstring): every entry one token, every line between entries one token."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from .. import markdown
from ..markdown import BOM, MemoryFileError, RawEntry, parse_blocks, strip_eol
from ..paths import MAX_FILE_BYTES
from .readback import Unit, units_of


class Side(StrEnum):
    BASE = "base"
    OURS = "ours"
    THEIRS = "theirs"

    __hash__ = str.__hash__  # a plain string's hash: Enum's own is a Python call, paid per token


class CannotMergeByEntry(Exception):
    """The entry-wise merge cannot be done safely; the message says why (git merges the file instead)."""


@dataclass(frozen=True, eq=False)
class Token:
    """One entry, or one line between entries, of one version of the file."""

    side: Side
    index: int  # position among that version's tokens
    key: tuple[str, str]  # ("E", entry text) or ("G", the line; "" for a blank line)
    lines: tuple[str, ...]  # source lines with their line ends (no BOM)
    entry: RawEntry | None
    heading: bool = False  # a line between entries that opens a section (an ATX heading, a setext heading's text)
    line: int = -1  # the file line (BOM taken off) where its lines start in its version

    @property
    def blank(self) -> bool:
        return self.entry is None and self.key[1] == ""

    @property
    def is_item(self) -> bool:
        return self.entry is not None and self.entry.kind == "item"


@dataclass
class Version:
    side: Side
    bom: bool
    eol: str
    meta: dict[str, Any]
    header: tuple[str, ...]  # the frontmatter block's lines, fences included (empty without one)
    tokens: list[Token]
    governing: list[int | None] = field(default_factory=list)  # per token: the heading token above it, if any
    units: dict[int, Unit] = field(default_factory=dict)  # how markdown-it read it (readback.py), by first line

    def __post_init__(self) -> None:
        if not self.governing:
            above: int | None = None
            for token in self.tokens:
                self.governing.append(above)
                if token.heading:
                    above = token.index


def _file_eol(lines: Sequence[str]) -> str:
    for line in lines:
        if line.endswith("\r\n"):
            return "\r\n"
        if line.endswith(("\n", "\r")):
            return line[-1]
    return "\n"


_ATX = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
_SETEXT = re.compile(r" {0,3}(?:=+|-+)[ \t]*$")


def read_version(data: bytes, side: Side) -> Version:
    """Parse one version; CannotMergeByEntry when memtui would skip the file."""
    if len(data) > MAX_FILE_BYTES:
        raise CannotMergeByEntry(f"the {side} version is over the {MAX_FILE_BYTES // (1024 * 1024)} MiB limit")
    try:
        parsed, blocks = parse_blocks(markdown.decode(data))
    except MemoryFileError as exc:
        raise CannotMergeByEntry(f"the {side} version cannot be read as memory: {exc}") from None
    lines = list(parsed.lines)
    bom = bool(lines) and lines[0].startswith(BOM)
    if bom:
        lines[0] = lines[0][len(BOM):]
    starts = {e.line_start: e for e in parsed.entries}
    tokens: list[Token] = []
    i = parsed.body_line
    while i < len(lines):
        entry = starts.get(i)
        if entry is not None:
            tokens.append(Token(side, len(tokens), ("E", entry.text), tuple(lines[i:entry.line_end]), entry, line=i))
            i = entry.line_end
        else:
            glue = strip_eol(lines[i])
            heading = bool(_ATX.match(glue)) or (
                bool(glue.strip()) and i + 1 < len(lines) and i + 1 not in starts and _SETEXT.match(strip_eol(lines[i + 1]))
                is not None and (not tokens or tokens[-1].blank or tokens[-1].entry is not None))
            tokens.append(Token(side, len(tokens), ("G", glue if glue.strip() else ""), (lines[i],), None, heading, i))
            i += 1
    return Version(side, bom, _file_eol(lines), dict(parsed.meta), tuple(lines[:parsed.body_line]), tokens,
                   units=units_of(parsed, blocks, len(lines)) if side is not Side.BASE else {})  # BASE is never written


def _with_eol(lines: Sequence[str], eol: str) -> list[str]:
    return [strip_eol(line) + eol if line != strip_eol(line) else line for line in lines]


def _with_line_ends(version: Version, eol: str) -> Version:
    """`version` with every line end made `eol`, when its own line ends are others (a CRLF file
    stays CRLF; lines a side brings from an LF file become CRLF there)."""
    if version.eol == eol:
        return version
    tokens = [replace(t, lines=tuple(_with_eol(t.lines, eol))) for t in version.tokens]
    return replace(version, eol=eol, header=tuple(_with_eol(version.header, eol)), tokens=tokens)
