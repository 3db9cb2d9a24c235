"""Writing the merged file (with conflict markers, and resolved each way) and checking that each
resolution reads back as exactly the merged entries, sections and frontmatter."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from .. import collector, markdown
from ..markdown import BOM, MemoryFileError, parse_text, strip_eol
from ..paths import MAX_FILE_BYTES
from .frontmatter import Header, merge_header
from .parse import CannotMergeByEntry, Side, Token, Version, _with_line_ends, read_version
from .readback import Source, Unit, read_entries
from .resolve import Conflict, Merged, Origin, Piece, merge_tokens

MARKER_SIZE = 7


class Mode(Enum):
    OURS = "ours"
    THEIRS = "theirs"


class Seams(Enum):
    """Where a blank line goes between two merged tokens that were not neighbours in any version."""

    NONE = "none"
    UNLESS_ITEMS = "unless both are list items"
    ALL = "all"


def _needs_blank(a: Token | None, b: Token, seams: Seams, merged: Merged) -> bool:
    """A blank line between `a` and `b`, which follow each other in the result: never where
    they were neighbours in a version or one of them is blank; before a heading (or another
    line between entries) always, for readability; elsewhere as `seams` says."""
    if a is None or a.blank or b.blank or merged.neighbours(a, b):
        return False
    if b.entry is None:
        return True
    if seams is Seams.NONE:
        return False
    return not (seams is Seams.UNLESS_ITEMS and a.is_item and b.is_item)


def flatten(pieces: Sequence[Piece], mode: Mode) -> list[Token]:
    out: list[Token] = []
    for piece in pieces:
        if isinstance(piece, Conflict):
            out += piece.ours if mode is Mode.OURS else piece.theirs
        else:
            out.append(piece)
    return out


@dataclass
class Rendered:
    marked: list[str]
    ours: list[str]
    theirs: list[str]
    conflicts: int
    placed: dict[Mode, list[tuple[int, Token]]]  # per resolution: where each token's lines start in it


def _push(out: list[str], line: str, eol: str) -> None:
    if out and out[-1] == strip_eol(out[-1]):
        out[-1] += eol
    out.append(line)


def render(header: Header, merged: Merged, seams: Seams, eol: str) -> Rendered:
    """The result's lines three ways: with conflict markers, and resolved with ours or theirs.
    A blank line a seam needs next to a conflict goes inside that conflict's side, so that
    taking one side of every conflict gives exactly that side's resolved text."""
    marked: list[str] = []
    res: dict[Mode, list[str]] = {Mode.OURS: [], Mode.THEIRS: []}
    prev: dict[Mode, Token | None] = {Mode.OURS: None, Mode.THEIRS: None}
    placed: dict[Mode, list[tuple[int, Token]]] = {Mode.OURS: [], Mode.THEIRS: []}
    conflicts = 0
    start, middle, end = "<" * MARKER_SIZE + " ours", "=" * MARKER_SIZE, ">" * MARKER_SIZE + " theirs"
    if header.conflicting:
        conflicts += 1
        for line in (start + eol, *header.ours, middle + eol, *header.theirs, end + eol):
            _push(marked, line, eol)
    else:
        for line in header.ours:
            _push(marked, line, eol)
    for line in header.ours:
        _push(res[Mode.OURS], line, eol)
    for line in header.theirs:
        _push(res[Mode.THEIRS], line, eol)
    open_sides: dict[Mode, list[str]] | None = None  # the sides of the last conflict, still open for a seam's blank

    def close() -> None:
        nonlocal open_sides
        if open_sides is None:
            return
        for line in (start + eol, *open_sides[Mode.OURS], middle + eol, *open_sides[Mode.THEIRS], end + eol):
            _push(marked, line, eol)
        open_sides = None

    for piece in merged.pieces:
        if isinstance(piece, Conflict):
            if open_sides is None:
                open_sides = {Mode.OURS: [], Mode.THEIRS: []}
                conflicts += 1
            for mode, tokens in ((Mode.OURS, piece.ours), (Mode.THEIRS, piece.theirs)):
                for token in tokens:
                    if _needs_blank(prev[mode], token, seams, merged):
                        _push(open_sides[mode], eol, eol)
                        _push(res[mode], eol, eol)
                    placed[mode].append((len(res[mode]), token))
                    for line in token.lines:
                        _push(open_sides[mode], line, eol)
                        _push(res[mode], line, eol)
                    prev[mode] = token
            continue
        blank = {mode: _needs_blank(prev[mode], piece, seams, merged) for mode in res}
        if open_sides is not None:
            for mode in res:
                if blank[mode]:
                    _push(open_sides[mode], eol, eol)
            close()
        elif blank[Mode.OURS] or blank[Mode.THEIRS]:
            _push(marked, eol, eol)
        for mode in res:
            if blank[mode]:
                _push(res[mode], eol, eol)
            prev[mode] = piece
            placed[mode].append((len(res[mode]), piece))
        for line in piece.lines:
            _push(marked, line, eol)
            for mode in res:
                _push(res[mode], line, eol)
    close()
    return Rendered(marked, res[Mode.OURS], res[Mode.THEIRS], conflicts, placed)


def _expected_section(origin: Origin, mode: Mode) -> set[str]:
    """The sections `token` may have in the result (SPEC §2: sections are kept)."""
    if origin.inserted is None:
        assert origin.base is not None and origin.base.entry is not None
        base = origin.base.entry.section
        mine, other = (origin.ours, origin.theirs) if mode is Mode.OURS else (origin.theirs, origin.ours)
        for side_token in (mine, other):
            if side_token is not None and side_token.entry is not None and side_token.entry.section != base:
                return {side_token.entry.section}
        return {base}
    return {origin.inserted.entry.section} if origin.inserted.entry is not None else set()


Reference = tuple[list[str], dict[int, Unit]]  # a version's lines (line ends made the file's) and units


def references(sides: dict[Side, Version]) -> dict[Side, Reference]:
    return {side: ([*v.header, *(line for t in v.tokens for line in t.lines)], v.units) for side, v in sides.items()}


def read_back(text: str, resolved: Sequence[str], placed: Sequence[tuple[int, Token]],
              refs: dict[Side, Reference]) -> tuple[dict[str, Any], int, list[tuple[str, str]]]:
    """What `markdown.parse_text(text)` gives (frontmatter, body line, each entry's text and
    section) for a resolution of the merged file: `resolved` are its lines (BOM aside), and
    `placed` where each token's lines start in them. The body is read through readback.py,
    which parses only the joins between runs of a version's lines; parsed whole when that
    cannot tell (a half-merged file, a file read as one entry). MemoryFileError as
    `parse_text` raises it."""
    if "<<<<<<<" not in text and refs:
        lines = markdown.split_lines(text)
        meta, _, body_line, _ = markdown.parse_frontmatter(text, lines)
        if "name" not in meta and len(lines) == len(resolved):
            sources: list[Source | None] = [None] * len(lines)
            for at, token in placed:
                ref_lines, units = refs[token.side]
                if token.line >= 0 and units:
                    for k in range(len(token.lines)):
                        sources[at + k] = (ref_lines, units, token.line + k)
            body = lines[body_line:]
            if body_line == 0 and body and body[0].startswith(BOM):
                body[0] = body[0][len(BOM):]
            found = read_entries(body, sources[body_line:])
            if found is not None and found[1]:
                return meta, body_line, found[0]
    parsed = parse_text(text)
    return parsed.meta, parsed.body_line, [(e.text, e.section) for e in parsed.entries]


def check(text: str, header: Header, mode: Mode, pieces: Sequence[Piece], merged: Merged,
          sides: dict[Side, Version], resolved: Sequence[str] = (), placed: Sequence[tuple[int, Token]] = (),
          refs: dict[Side, Reference] | None = None) -> None:
    """Raise CannotMergeByEntry unless `text` reads back as exactly the merged entries (text,
    order, section) and frontmatter, for `mode` (how its conflicts are resolved)."""
    try:
        meta_read, body_line, entries = read_back(text, resolved, placed, refs or {})
    except MemoryFileError as exc:
        raise CannotMergeByEntry(f"the merged file would not load ({exc})") from None
    meta = header.meta_ours if mode is Mode.OURS else header.meta_theirs
    if meta_read != meta or body_line != len(header.ours if mode is Mode.OURS else header.theirs):
        raise CannotMergeByEntry("the merged frontmatter would not read back as merged")
    flat = flatten(pieces, mode)
    tokens = [t for t in flat if t.entry is not None]
    if [t.key[1] for t in tokens] != [text for text, _ in entries]:
        raise CannotMergeByEntry("the merged entries would not read back as merged (two pieces would join)")
    actual = {id(t): section for t, (_, section) in zip(tokens, entries)}
    heading_above: dict[int, Token | None] = {}  # id(entry) -> the heading above it in the result
    above: Token | None = None
    for token in flat:
        if token.heading:
            above = token
        elif token.entry is not None:
            heading_above[id(token)] = above
    previous: dict[Side, list[int | None]] = {}  # per version: the entry before each token, if any
    for side, version in sides.items():
        last: int | None = None
        previous[side] = []
        for t in version.tokens:
            previous[side].append(last)
            if t.entry is not None:
                last = t.index
    for token in tokens:
        origin = merged.origins[id(token)]
        inserted = origin.inserted
        if inserted is not None and inserted.entry is not None:
            heading = sides[inserted.side].governing[inserted.index]
            if heading is not None:
                # an addition stays under the heading it was added under (renamed by the other
                # side or not): never under another one
                if heading_above[id(token)] is not merged.aliases.get((inserted.side, heading)):
                    raise CannotMergeByEntry("an entry would end up under another heading")
                continue
        allowed = _expected_section(origin, mode)
        if origin.base is not None and origin.base.entry is not None and \
                sides[Side.BASE].governing[origin.base.index] in merged.disputed:
            allowed.add(origin.base.entry.section)  # under a heading in conflict: either side's way
        if inserted is not None and inserted.entry is not None:
            # an addition made at the top, before any heading, follows the entry before it
            before = previous[inserted.side][inserted.index]
            twin = merged.aliases.get((inserted.side, before)) if before is not None else None
            if twin is not None and id(twin) in actual:
                allowed.add(actual[id(twin)])
        if actual[id(token)] not in allowed:
            raise CannotMergeByEntry("an entry would end up under another heading")


@dataclass(frozen=True)
class EntryMerge:
    data: bytes
    conflicts: int  # conflict blocks in `data` (0: a clean merge)


def merge_entries(base_data: bytes, ours_data: bytes, theirs_data: bytes) -> EntryMerge:
    """Merge three versions of one memory file by entry. CannotMergeByEntry when that cannot be
    done safely (the caller then lets git merge the lines). The cycle collector is paused
    meanwhile: a merge leaves next to nothing for it (15 objects at 30,000 entries), and its
    passes over the millions of objects of three parsed versions cost a third of the time."""
    with collector.paused():
        return _merge_entries(base_data, ours_data, theirs_data)


def _merge_entries(base_data: bytes, ours_data: bytes, theirs_data: bytes) -> EntryMerge:
    base = read_version(base_data, Side.BASE)
    ours = read_version(ours_data, Side.OURS)
    theirs = read_version(theirs_data, Side.THEIRS)
    eol = ours.eol if ours.eol != base.eol else theirs.eol  # a side that changed line ends wins
    bom = BOM if (ours.bom if ours.bom != base.bom else theirs.bom) else ""
    base, ours, theirs = (_with_line_ends(v, eol) for v in (base, ours, theirs))
    header = merge_header(base, ours, theirs, eol)
    merged = merge_tokens(base, ours, theirs)
    sides = {Side.BASE: base, Side.OURS: ours, Side.THEIRS: theirs}
    refs = references(sides)
    problem: CannotMergeByEntry | None = None
    for seams in Seams:
        out = render(header, merged, seams, eol)
        try:
            ours_text, theirs_text = bom + "".join(out.ours), bom + "".join(out.theirs)
            check(ours_text, header, Mode.OURS, merged.pieces, merged, sides, out.ours, out.placed[Mode.OURS], refs)
            if theirs_text != ours_text:
                check(theirs_text, header, Mode.THEIRS, merged.pieces, merged, sides, out.theirs,
                      out.placed[Mode.THEIRS], refs)
        except CannotMergeByEntry as exc:
            problem = problem or exc
            continue
        data = (bom + "".join(out.marked)).encode("utf-8")
        if len(data) > MAX_FILE_BYTES:
            raise CannotMergeByEntry("the merged file would be over the 1 MiB limit")
        return EntryMerge(data, out.conflicts)
    assert problem is not None
    raise problem
