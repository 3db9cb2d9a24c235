"""The entries of a memory file (SPEC §2): what is one entry, its section and its line span,
read from markdown-it's block tokens; a half-merged file's entries outside its conflict
regions (SPEC §8 "Unmerged files"); an entry's id, and how an entry is found again."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .frontmatter import frontmatter_span, parse_frontmatter
from .markdown_lines import BOM, MemoryFileError, _eol_of, _parsers, _plain_lines, split_lines, strip_eol

if TYPE_CHECKING:
    from markdown_it.token import Token

_LIST_MARKER = re.compile(r"^[ \t]*(?:[-+*]|\d{1,9}[.)])(?=[ \t]|$)[ \t]*")


BLOCK_TOKENS = {"paragraph_open", "blockquote_open", "table_open", "html_block", "fence", "code_block"}
LIST_TOKENS = {"bullet_list_open", "ordered_list_open"}


@dataclass(frozen=True)
class RawEntry:
    """An entry as found in a file, before it is given a layer and an id."""

    text: str
    section: str
    line_start: int
    line_end: int
    kind: str  # whole | item | block


@dataclass
class ParsedFile:
    text: str
    meta: dict[str, Any]
    lines: list[str]  # line 0 keeps the BOM, if the file has one
    frontmatter_lines: tuple[int, int] | None  # [start, end) of the YAML between the fences
    body_line: int  # the file line holding the body's first character (the line after the closing fence)
    body_offset: int = 0
    entries: list[RawEntry] = field(default_factory=list)
    # the text these entries were parsed from; writers re-parse a ParsedFile whose text differs
    parsed_from: str | None = field(default=None, repr=False, compare=False)
    # git conflict regions, [start, end) file lines from `<<<<<<<` to `>>>>>>>` (SPEC §8 "Unmerged files")
    conflicts: tuple[tuple[int, int], ...] = ()

    @property
    def single_entry(self) -> bool:
        """True when the body is read as one entry (`name` in the frontmatter, or no top-level list)."""
        return bool(self.entries) and self.entries[0].kind == "whole"


_CONFLICT_OPEN = re.compile(r"<{7}(?:[ \t]|\r\n|\r|\n|\Z)")
_CONFLICT_CLOSE = re.compile(r">{7}(?:[ \t]|\r\n|\r|\n|\Z)")


def conflict_regions(lines: Sequence[str]) -> tuple[tuple[int, int], ...]:
    """The git conflict regions of a file (SPEC §8 "Unmerged files"): [start, end) lines from a
    line that starts with `<<<<<<<` through the next that starts with `>>>>>>>` (to the end of
    the file when none does). A `=======` or `>>>>>>>` line outside such a region is Markdown
    (a heading underline, a nested quote)."""
    regions = []
    i, n = 0, len(lines)
    while i < n:
        line = lines[i][len(BOM):] if i == 0 and lines[i].startswith(BOM) else lines[i]
        if _CONFLICT_OPEN.match(line):
            end = next((k + 1 for k in range(i + 1, n) if _CONFLICT_CLOSE.match(lines[k])), n)
            regions.append((i, end))
            i = end
        else:
            i += 1
    return tuple(regions)


def line_ranges(regions: Iterable[tuple[int, int]]) -> str:
    """Conflict regions as 1-based inclusive line ranges for a person: `3-9, 14-20`."""
    return ", ".join(f"{start + 1}-{end}" for start, end in regions)


def parse_text(text: str) -> ParsedFile:
    """A file's frontmatter and entries (SPEC §2). MemoryFileError when the frontmatter cannot
    be read (YAML that cannot load or is not a mapping, conflict markers inside it)."""
    return parse_blocks(text)[0]


def parse_blocks(text: str) -> tuple[ParsedFile, list[Token]]:
    """`parse_text`, with markdown-it's block tokens of the body (none for a half-merged file),
    for a caller that reuses the parse (the merge driver checks its result against them)."""
    lines = split_lines(text)
    conflicts = conflict_regions(lines) if "<<<<<<<" in text else ()
    if conflicts:
        return _parse_half_merged(text, lines, conflicts), []
    meta, fm_lines, body_line, body_offset = parse_frontmatter(text, lines)
    parsed = ParsedFile(text=text, meta=meta, lines=lines, frontmatter_lines=fm_lines, body_line=body_line,
                        body_offset=body_offset, parsed_from=text)
    tokens = _parsers()[1].parse(text[body_offset:])
    has_list = any(t.type in LIST_TOKENS and t.level == 0 for t in tokens)
    if "name" in meta or not has_list:
        parsed.entries = _whole_body(parsed, tokens)
    else:
        parsed.entries = _split_body(parsed, tokens)
    return parsed, tokens


def _parse_half_merged(text: str, lines: list[str], conflicts: tuple[tuple[int, int], ...]) -> ParsedFile:
    """A file with git conflict markers (SPEC §8 "Unmerged files"): the marked regions are read
    as blank lines (so no marker becomes a heading underline or a lazy continuation), and no
    entry touches a region: an entry that spans one, and a file read as one entry, give none.
    Markers in the frontmatter make the whole file unreadable (which keys hold is unknown)."""
    bom = len(BOM) if text.startswith(BOM) else 0
    span = frontmatter_span(text, lines)
    if span is not None and conflicts[0][0] <= span[1]:
        inside = [r for r in conflicts if r[0] <= span[1]]
        raise MemoryFileError(f"unresolved git conflict markers in the frontmatter (lines {line_ranges(inside)}); "
                              "finish the merge")
    blank = list(lines)
    for start, end in conflicts:
        for i in range(start, end):
            blank[i] = (BOM if i == 0 and bom else "") + _eol_of(lines[i], "")
    shadow = parse_text("".join(blank))
    parsed = ParsedFile(text=text, meta=shadow.meta, lines=lines, frontmatter_lines=shadow.frontmatter_lines,
                        body_line=shadow.body_line, body_offset=sum(len(line) for line in lines[:shadow.body_line])
                        if shadow.body_line else bom, parsed_from=text, conflicts=conflicts)
    if not shadow.single_entry:
        parsed.entries = [e for e in shadow.entries
                          if not any(e.line_start < end and start < e.line_end for start, end in conflicts)]
    return parsed


def _whole_body(parsed: ParsedFile, tokens: list[Token]) -> list[RawEntry]:
    # body line i is file line body_line + i
    body = [strip_eol(line) for line in split_lines(parsed.text[parsed.body_offset :])]
    filled = [i for i, line in enumerate(body) if line.strip()]
    if not filled:
        return []
    first, last = filled[0], filled[-1]
    text = "\n".join(body[first : last + 1]).strip()
    section = next(
        (tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open" and t.level == 0), ""
    )
    start = parsed.body_line + first
    return [RawEntry(text, section, start, parsed.body_line + last + 1, "whole")]


def _span(parsed: ParsedFile, begin: int, end: int) -> tuple[int, int] | None:
    """Absolute [start, end) of body lines [begin, end), trailing blank lines dropped."""
    start = parsed.body_line + begin
    stop = min(parsed.body_line + end, len(parsed.lines))
    while stop > start and not parsed.lines[stop - 1].strip():
        stop -= 1
    return (start, stop) if stop > start else None


def _item_head(first_line: str) -> tuple[str, int]:
    """A list item's marker prefix (indent, marker, following spaces) and its content indent:
    the prefix's width, or the marker's width plus one when the item's first line is empty."""
    m = _LIST_MARKER.match(first_line)
    prefix = m.group(0) if m else ""
    if not first_line[len(prefix) :].strip():
        return prefix, len(prefix.rstrip(" \t")) + 1
    return prefix, len(prefix)


def _dedent(line: str, width: int) -> str:
    spaces = len(line) - len(line.lstrip(" "))
    return line[min(spaces, width) :]


def item_text(lines: Sequence[str]) -> str:
    """The text of a list item from its source lines (without line ends): the marker removed
    from the first line, the item's content indent (or what a line has of it) from the others."""
    prefix, width = _item_head(lines[0])
    return "\n".join([lines[0][len(prefix) :]] + [_dedent(line, width) for line in lines[1:]]).strip()


def _split_body(parsed: ParsedFile, tokens: list[Token]) -> list[RawEntry]:
    entries: list[RawEntry] = []
    section = ""
    plain = _plain_lines(parsed.lines)  # once: a copy per entry made a long file quadratic
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.level == 0:
            section = tokens[i + 1].content
            continue
        if tok.type == "list_item_open" and tok.level == 1:
            kind = "item"
        elif tok.type in BLOCK_TOKENS and tok.level == 0:
            kind = "block"
        else:
            continue
        if tok.map is None:
            continue
        span = _span(parsed, tok.map[0], tok.map[1])
        if span is None:
            continue
        lines = [strip_eol(line) for line in plain[span[0] : span[1]]]
        text = item_text(lines) if kind == "item" else "\n".join(lines).strip()
        if text:
            entries.append(RawEntry(text, section, span[0], span[1], kind))
    return entries


def entry_id(layer: str, rel_path: str, text: str, occurrence: int) -> str:
    digest = hashlib.sha1(f"{layer}\0{rel_path}\0{occurrence}\0{text}".encode()).hexdigest()
    return digest[:16]


def find_entry(parsed: ParsedFile, line_start: int, text: str) -> int | None:
    """The index in `parsed.entries` of the entry that starts at `line_start` with `text`: how
    an entry read earlier is found again in a file (by place and text, never by place alone)."""
    for i, entry in enumerate(parsed.entries):
        if entry.line_start == line_start and entry.text == text:
            return i
    return None
