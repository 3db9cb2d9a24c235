"""Reading the merged file back without parsing it whole (the check in write.py).

The merged file is made of runs of lines copied from the three versions, which were parsed
once already. markdown-it reads a body as a sequence of *units*: a top-level block (a
paragraph, a heading, a fence …) or one item of a top-level list. What it makes of a unit
depends only on the unit's own lines and the lines up to where the next unit starts (the
line that ends a paragraph or a list item, the blank lines a list looks past), never on what
came before: a unit that starts where a fresh parse would start reads the same either way (a
list item that continues a list gives the same item, and the same entry, as one that starts
a new list). So a unit of the merged body whose lines, up to and including the next unit's
first line, are a version's unit's lines is that unit again, entry and section name
included; only the units around the joins (where two runs meet, or a seam's blank line was
put) are parsed, a few lines at a time, each window from a unit's start and trusted up to
the start of its last unit (that one may read past the window's end).

The result is what `markdown.parse_text` gives (entry texts, in order, with their sections),
for a body that is not read whole (a top-level list, no `name`); the caller parses whole when
this says it cannot tell.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from .. import markdown
from ..markdown import LIST_TOKENS, ParsedFile

if TYPE_CHECKING:
    from markdown_it.token import Token as BlockToken


class Unit(NamedTuple):
    """One unit of a parsed body, keyed elsewhere by the file line it starts on."""

    next: int  # the file line where the next unit starts (the file's line count after the last)
    heading: bool  # a top-level heading: `value` is the section it opens
    value: str | None  # a heading's section name, or the entry the unit is (None: no entry)
    item: bool  # an item of a top-level list


def _units(blocks: Sequence[BlockToken], entries: dict[int, str], offset: int, end: int) -> list[tuple[int, Unit]]:
    """The units of a body parsed into `blocks`, at file lines (`offset` + body line), the last
    one followed by `end`; `entries` maps an entry's first file line to its text. A unit's
    first token is a top-level block's (a list's own token aside) or an item's of a top-level list."""
    firsts = [i for i, t in enumerate(blocks) if t.nesting >= 0 and t.map is not None and (
        (t.level == 0 and t.type not in LIST_TOKENS) or (t.level == 1 and t.type == "list_item_open"))]
    starts = [offset + blocks[i].map[0] for i in firsts]  # type: ignore[index]
    following = [*starts[1:], end]
    return [(start, Unit(after, True, blocks[i + 1].content, False) if blocks[i].type == "heading_open"
             else Unit(after, False, entries.get(start), blocks[i].type == "list_item_open"))
            for i, start, after in zip(firsts, starts, following)]


def units_of(parsed: ParsedFile, blocks: Sequence[BlockToken], line_count: int) -> dict[int, Unit]:
    """A version's units by first file line; none for a file not read as a list of entries (a
    whole-file entry, a half-merged file), whose entries are not per unit."""
    if parsed.conflicts or "name" in parsed.meta or not any(t.type in LIST_TOKENS and t.level == 0 for t in blocks):
        return {}
    entries = {e.line_start: e.text for e in parsed.entries}
    return dict(_units(blocks, entries, parsed.body_line, line_count))


def _window(body: Sequence[str], start: int, end: int) -> list[tuple[int, Unit]]:
    """The units of body lines [start, end) parsed alone, at body lines."""
    lines = list(body[start:end])
    text = "".join(lines)
    blocks = markdown._parsers()[1].parse(text)
    window = ParsedFile(text=text, meta={}, lines=lines, frontmatter_lines=None, body_line=0)
    entries = {start + e.line_start: e.text for e in markdown._split_body(window, blocks)}
    return _units(blocks, entries, start, end)


Source = tuple[Sequence[str], dict[int, Unit], int]  # a version's file lines and units, and a line of it


def read_entries(body: Sequence[str], sources: Sequence[Source | None]) -> tuple[list[tuple[str, str]], bool] | None:
    """(text, section) of each entry markdown-it finds in `body` (a file's body lines, as
    `markdown.split_lines` splits them), and whether it holds a top-level list. `sources[i]`
    says which version's line body line i was copied from, if any (a hint: the lines are
    compared). None when the body holds a byte order mark, which only a whole parse places."""
    if any(markdown.BOM in line for line in body):
        return None
    n = len(body)
    entries: list[tuple[str, str]] = []
    section = ""
    has_list = False
    p = 0
    while p < n:
        taken: list[tuple[int, Unit]] = []
        source = sources[p]
        unit = source[1].get(source[2]) if source is not None else None
        if source is not None and unit is not None:
            lines, _, q = source
            span = unit.next - q
            if unit.next < len(lines):  # the next unit's first line is read too
                same = p + span < n and body[p:p + span + 1] == lines[q:unit.next + 1]
            else:  # the version's last unit reads to its end: so must this one
                same = p + span == n and body[p:] == lines[q:]
            if same:
                taken, p = [(p, unit)], p + span
        if not taken:
            size = 4
            while True:
                end = min(n, p + size)
                found = _window(body, p, end)
                if end == n:
                    taken, p = found, n
                    break
                if len(found) >= 2:
                    taken, p = found[:-1], found[-1][0]
                    break
                size *= 4
        for _, unit in taken:
            if unit.heading:
                section = unit.value or ""
            else:
                has_list = has_list or unit.item
                if unit.value is not None:
                    entries.append((unit.value, section))
    return entries, has_list
