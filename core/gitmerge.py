"""Team memory through git (SPEC §14): a merge driver that merges one memory file by entry.

git hands the driver three versions of a file (BASE, OURS, THEIRS). Each is parsed with the
same parser as everything else (`markdown.parse_text`) and read as a sequence of *tokens*:
every entry is one token (its text is its identity, duplicates are told apart by position),
and every line between entries (a heading, a blank line, a thematic break) is a token of its
own. Each side is diffed against BASE token by token; a replaced run is paired up entry to
entry (by similarity, in order), so a changed entry is known as changed and not as "one
deleted, one added". Then, per BASE token and per gap between them:

- kept on both sides → kept; changed or deleted on one side only → that change;
- changed the same way on both → once; deleted on both → gone;
- changed differently on both, or changed on one side and deleted on the other → a conflict
  around that token alone (standard `<<<<<<<` / `=======` / `>>>>>>>` markers; conflicting
  tokens that are neighbours share one block);
- added in the same gap on both sides → ours first, then theirs, each under the heading it
  was added under (theirs' additions to the current section come before a section ours
  opened); an entry both added is kept once.

The frontmatter merges as a whole when one side left it alone, else key by key: `tags`
united (ours, then the ones theirs added; a tag one side removed stays removed), the later
`updatedAt`, any other key changed on one side only → that change, changed differently on
both → the whole frontmatter block is one conflict.

Nothing is trusted: the result (and each side of it, when it has conflicts) is parsed again
and must give exactly the merged entries, sections and frontmatter, in order; a blank line
is put at a seam where two pieces that were not neighbours would join (SPEC §2). When that
cannot be done, or when a version is a file memtui would skip (not UTF-8, over 1 MiB, invalid
frontmatter), the driver falls back to git's own line merge (`git merge-file`): never a
silently wrong merge.

`install` / `uninstall` add the attribute line to the workspace's `.gitattributes` and the
driver to the repository-local git config.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import Enum, StrEnum
from pathlib import Path
from typing import Any

from . import gate, markdown, process_gate
from .fileio import MAX_REWRITTEN_BYTES, read_if_exists, read_regular
from .markdown import BOM, MemoryFileError, RawEntry, frontmatter_updated_at, parse_text, strip_eol, tags_of
from .paths import MAX_FILE_BYTES

DRIVER = "memtui"
ATTRIBUTE_PATTERN = ".muse/memory/**/*.md"
ATTRIBUTE_LINE = f"{ATTRIBUTE_PATTERN} merge={DRIVER}"
DRIVER_NAME = "memtui: merge Muse memory files entry by entry"
MARKER_SIZE = 7


class Side(StrEnum):
    BASE = "base"
    OURS = "ours"
    THEIRS = "theirs"

    __hash__ = str.__hash__  # a plain string's hash: Enum's own is a Python call, paid per token


class CannotMergeByEntry(Exception):
    """The entry-wise merge cannot be done safely; the message says why (git merges the file instead)."""


class GitSetupError(RuntimeError):
    """`memtui git install` cannot do its job; the message says why."""


# ----------------------------------------------------------------------------- reading a side


@dataclass(frozen=True, eq=False)
class Token:
    """One entry, or one line between entries, of one version of the file."""

    side: Side
    index: int  # position among that version's tokens
    key: tuple[str, str]  # ("E", entry text) or ("G", the line; "" for a blank line)
    lines: tuple[str, ...]  # source lines with their line ends (no BOM)
    entry: RawEntry | None
    heading: bool = False  # a line between entries that opens a section (an ATX heading, a setext heading's text)

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
        parsed = parse_text(markdown.decode(data))
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
            tokens.append(Token(side, len(tokens), ("E", entry.text), tuple(lines[i:entry.line_end]), entry))
            i = entry.line_end
        else:
            glue = strip_eol(lines[i])
            heading = bool(_ATX.match(glue)) or (
                bool(glue.strip()) and i + 1 < len(lines) and i + 1 not in starts and _SETEXT.match(strip_eol(lines[i + 1]))
                is not None and (not tokens or tokens[-1].blank or tokens[-1].entry is not None))
            tokens.append(Token(side, len(tokens), ("G", glue if glue.strip() else ""), (lines[i],), None, heading))
            i += 1
    return Version(side, bom, _file_eol(lines), dict(parsed.meta), tuple(lines[:parsed.body_line]), tokens)


# ----------------------------------------------------------------------------- each side against base


class Fate(Enum):
    KEPT = "kept"
    DELETED = "deleted"
    CHANGED = "changed"


@dataclass
class Changes:
    """What one side did to each base token, and what it added in each gap (gap g is before base token g)."""

    fates: list[tuple[Fate, Token | None]]
    inserts: list[list[Token]]


def _pairable(a: Token, b: Token) -> bool:
    """An entry pairs with an entry, a blank line with a blank line, another line between
    entries (a heading) with another such line."""
    if a.entry is not None and b.entry is not None:
        return True
    return a.entry is None and b.entry is None and a.blank == b.blank


def _similarity(a: Token, b: Token) -> float:
    return difflib.SequenceMatcher(None, a.key[1], b.key[1], autojunk=False).quick_ratio()


MAX_PAIRING_CELLS = 2500


def pair_up(old: Sequence[Token], new: Sequence[Token], elsewhere: frozenset[tuple[str, str]] = frozenset(),
            known: frozenset[tuple[str, str]] = frozenset()) -> list[tuple[int | None, int | None]]:
    """Align a replaced run of base tokens with the side's tokens in order: as many pairs as
    possible (an entry with an entry, a non-blank line with a non-blank line), the most similar
    first. Unpaired old tokens were deleted, unpaired new ones added. A pairing can only make a
    conflict finer or coarser, never hide one: a base token is touched either way. An old entry
    whose text the side still holds elsewhere (`elsewhere`: it moved) pairs with no other text,
    nor does a new entry whose text BASE holds elsewhere (`known`: it moved here)."""
    k, m = len(old), len(new)

    def _pair(a: Token, b: Token) -> bool:
        return _pairable(a, b) and (a.key == b.key or (a.key not in elsewhere and b.key not in known))

    if k * m > MAX_PAIRING_CELLS:  # a rewritten file: no pairing (every old token deleted, every new one added)
        return [(x, None) for x in range(k)] + [(None, y) for y in range(m)]
    best = [[0.0] * (m + 1) for _ in range(k + 1)]
    for x in range(1, k + 1):
        for y in range(1, m + 1):
            score = max(best[x - 1][y], best[x][y - 1])
            if _pair(old[x - 1], new[y - 1]):
                score = max(score, best[x - 1][y - 1] + 2 + _similarity(old[x - 1], new[y - 1]))
            best[x][y] = score
    steps: list[tuple[int | None, int | None]] = []
    x, y = k, m
    while x or y:
        if x and y and _pair(old[x - 1], new[y - 1]) and \
                best[x][y] == best[x - 1][y - 1] + 2 + _similarity(old[x - 1], new[y - 1]):
            steps.append((x - 1, y - 1))
            x, y = x - 1, y - 1
        elif x and (not y or best[x][y] == best[x - 1][y]):
            steps.append((x - 1, None))
            x -= 1
        else:
            steps.append((None, y - 1))
            y -= 1
    steps.reverse()
    return steps


def _diff_keys(tokens: Sequence[Token]) -> list[tuple[Any, ...]]:
    """Keys that are unique within one version, so the diff below is linear: an entry is its
    text and which occurrence of that text it is; a line between entries (a blank line, a
    heading) is that line, the entry before it and how far after that entry it comes. Two
    versions share a key where they share the token in the same place."""
    seen: dict[tuple[str, str], int] = {}
    keys: list[tuple[Any, ...]] = []
    anchor: tuple[Any, ...] = ()
    offset = 0
    for token in tokens:
        n = seen[token.key] = seen.get(token.key, -1) + 1
        if token.entry is not None:
            anchor, offset = (token.key, n), 0
            keys.append(anchor)
        else:
            offset += 1
            keys.append((token.key, anchor, offset, n))
    return keys


def opcodes(a: Sequence[Any], b: Sequence[Any]) -> list[tuple[str, int, int, int, int]]:
    """`difflib.SequenceMatcher.get_opcodes()` for two sequences of keys each unique within its
    own sequence, in O(n log n): the longest common subsequence of unique keys is the longest
    increasing run of their positions in `b` (patience sorting), so many equal lines (blank
    lines between thousands of paragraphs) never make the diff quadratic."""
    import bisect

    where = {key: j for j, key in enumerate(b)}
    pairs = [(i, where[key]) for i, key in enumerate(a) if key in where]
    tails: list[int] = []  # tails[k]: the smallest b position ending an increasing run of length k+1
    tail_at: list[int] = []  # ... and the index in `pairs` of that pair
    back: list[int] = [-1] * len(pairs)
    for p, (_, j) in enumerate(pairs):
        k = bisect.bisect_left(tails, j)
        back[p] = tail_at[k - 1] if k else -1
        if k == len(tails):
            tails.append(j)
            tail_at.append(p)
        else:
            tails[k], tail_at[k] = j, p
    chain: list[tuple[int, int]] = []
    p = tail_at[-1] if tail_at else -1
    while p != -1:
        chain.append(pairs[p])
        p = back[p]
    chain.reverse()
    out: list[tuple[str, int, int, int, int]] = []
    i = j = 0
    for x, y in [*chain, (len(a), len(b))]:
        if i < x or j < y:
            out.append(("replace" if i < x and j < y else "delete" if i < x else "insert", i, x, j, y))
        if x < len(a):
            if out and out[-1][0] == "equal" and out[-1][2] == x and out[-1][4] == y:
                out[-1] = ("equal", out[-1][1], x + 1, out[-1][3], y + 1)
            else:
                out.append(("equal", x, x + 1, y, y + 1))
        i, j = x + 1, y + 1
    return out


def changes(base: Version, side: Version) -> Changes:
    n = len(base.tokens)
    fates: list[tuple[Fate, Token | None]] = [(Fate.DELETED, None)] * n
    inserts: list[list[Token]] = [[] for _ in range(n + 1)]
    texts = frozenset(t.key for t in side.tokens if t.entry is not None)
    known = frozenset(t.key for t in base.tokens if t.entry is not None)
    for op, i1, i2, j1, j2 in opcodes(_diff_keys(base.tokens), _diff_keys(side.tokens)):
        if op == "equal":
            for d in range(i2 - i1):
                fates[i1 + d] = (Fate.KEPT, side.tokens[j1 + d])
            continue
        gap = i1
        for x, y in pair_up(base.tokens[i1:i2], side.tokens[j1:j2], texts, known):
            if x is not None:
                gap = i1 + x + 1
                if y is None:
                    fates[i1 + x] = (Fate.DELETED, None)
                else:
                    new = side.tokens[j1 + y]
                    fates[i1 + x] = (Fate.KEPT if new.key == base.tokens[i1 + x].key else Fate.CHANGED, new)
            elif y is not None:
                inserts[gap].append(side.tokens[j1 + y])
    return Changes(fates, inserts)


# ----------------------------------------------------------------------------- the merged sequence


@dataclass
class Conflict:
    ours: list[Token]
    theirs: list[Token]


Piece = Token | Conflict


@dataclass
class Origin:
    """Where a merged token came from, for checking its section afterwards."""

    base: Token | None = None
    ours: Token | None = None
    theirs: Token | None = None
    inserted: Token | None = None  # the token as its side added it


@dataclass
class Merged:
    pieces: list[Piece] = field(default_factory=list)
    origins: dict[int, Origin] = field(default_factory=dict)  # id(token) → origin
    aliases: dict[tuple[Side, int], Token] = field(default_factory=dict)  # a side's token → the merged token

    sources: dict[int, list[tuple[Side, int]]] = field(default_factory=dict)  # id(merged token) → what it stands for
    disputed: set[int] = field(default_factory=set)  # base headings deleted on one side, added under on the other
    contested: set[int] = field(default_factory=set)  # id() of the entries added under such a heading
    moved_away: Counter[tuple[str, str]] = field(default_factory=Counter)  # deleted by one side, moved by the other
    twice: dict[int, Token] = field(default_factory=dict)  # id(theirs' addition) → ours' same addition elsewhere

    def add(self, token: Token, origin: Origin, *sources: Token | None) -> None:
        self.origins[id(token)] = origin
        for source in sources:
            if source is not None:
                self.alias(source, token)

    def alias(self, source: Token, token: Token) -> None:
        self.aliases[(source.side, source.index)] = token
        self.sources.setdefault(id(token), []).append((source.side, source.index))

    def neighbours(self, a: Token, b: Token) -> bool:
        """True when `b` followed `a` in some version (through the tokens they stand for)."""
        return any(self.aliases.get((side, index + 1)) is b for side, index in self.sources.get(id(a), ()))


def _disputed(base: Version, mine: Version, own: Changes, other: Changes) -> tuple[set[int], set[int]]:
    """Headings of BASE the other side deleted while `mine` added entries under them: (those
    headings' base indexes, the ids of the entries added under them). Merged cleanly, such an
    entry would land under the heading before (a silent move), so both become conflicts."""
    to_base = {token.index: g for g, (_, token) in enumerate(own.fates) if token is not None}
    headings: set[int] = set()
    added: set[int] = set()
    for gap in own.inserts:
        for token in gap:
            above = mine.governing[token.index] if token.entry is not None else None
            g = to_base.get(above) if above is not None else None
            if g is not None and base.tokens[g].heading and other.fates[g][0] is Fate.DELETED:
                headings.add(g)
                added.add(id(token))
    return headings, added


def _moved_away(base: Version, o: Changes, t: Changes) -> Counter[tuple[str, str]]:
    """Entries deleted where they were on both sides that only one side added back elsewhere
    (moved): one side deleted them, the other merely moved them, so they stay deleted."""
    gone = Counter(base.tokens[g].key for g in range(len(base.tokens))
                   if base.tokens[g].entry is not None and o.fates[g][0] is Fate.DELETED and t.fates[g][0] is Fate.DELETED)
    o_added = Counter(x.key for gap in o.inserts for x in gap if x.entry is not None)
    t_added = Counter(x.key for gap in t.inserts for x in gap if x.entry is not None)
    return Counter({key: n for key, n in gone.items() if (o_added[key] > 0) != (t_added[key] > 0)})


def merge_lines(base: Sequence[str], ours: Sequence[str], theirs: Sequence[str]) -> list[str] | None:
    """Both sides' line changes applied to `base` where they touch different lines, as git's
    line merge does (changes that overlap or meet: None)."""
    base = list(base)

    def edits(side: Sequence[str]) -> list[tuple[int, int, list[str]]]:
        matcher = difflib.SequenceMatcher(None, base, list(side), autojunk=False)
        return [(i1, i2, list(side[j1:j2])) for op, i1, i2, j1, j2 in matcher.get_opcodes() if op != "equal"]

    o, t = edits(ours), edits(theirs)
    for i1, i2, _ in o:
        for j1, j2, _ in t:
            if i1 <= j2 and j1 <= i2:  # overlapping or adjacent: a conflict, as in git
                return None
    out: list[str] = []
    at = 0
    for i1, i2, new in sorted(o + t, key=lambda e: (e[0], e[1])):
        out += base[at:i1] + new
        at = i2
    return out + base[at:]


def _whole_entry_merged(b: Token, ot: Token | None, tt: Token | None) -> Token | None:
    """A file that is one entry (SPEC §2), changed on both sides on different lines: one entry
    with both changes, as git would merge it (the result is checked like any other)."""
    if b.entry is None or b.entry.kind != "whole" or ot is None or tt is None or ot.entry is None:
        return None
    lines = merge_lines(b.lines, ot.lines, tt.lines)
    if lines is None or not lines or not lines[-1].endswith(("\n", "\r")) and lines[-1] != ot.lines[-1] \
            and lines[-1] != tt.lines[-1]:
        return None
    text = "\n".join(strip_eol(line) for line in lines).strip()
    return replace(ot, key=("E", text), lines=tuple(lines))


def merge_tokens(base: Version, ours: Version, theirs: Version) -> Merged:
    o, t = changes(base, ours), changes(base, theirs)
    out = Merged()
    o_heads, o_added = _disputed(base, ours, o, t)
    t_heads, t_added = _disputed(base, theirs, t, o)
    out.disputed = o_heads | t_heads
    out.contested = o_added | t_added
    out.moved_away = _moved_away(base, o, t)
    # an entry both sides added, in different places: kept once, where ours put it
    ours_added: dict[tuple[str, str], list[Token]] = {}
    for gap in o.inserts:
        for x in gap:
            if x.entry is not None:
                ours_added.setdefault(x.key, []).append(x)
    for g, gap in enumerate(t.inserts):
        here = {x.key for x in o.inserts[g]}
        for x in gap:
            twins = ours_added.get(x.key) if x.entry is not None and x.key not in here else None
            if twins:
                out.twice[id(x)] = twins.pop(0)
    for g in range(len(base.tokens) + 1):
        _merge_gap(out, o.inserts[g], t.inserts[g])
        if g == len(base.tokens):
            break
        b = base.tokens[g]
        (of, ot), (tf, tt) = o.fates[g], t.fates[g]
        origin = Origin(base=b, ours=ot, theirs=tt)
        if g in out.disputed and (of is Fate.DELETED) != (tf is Fate.DELETED):
            # a heading one side deleted while the other added under it: a conflict, not a move
            conflict = Conflict([ot] if ot is not None else [], [tt] if tt is not None else [])
            out.pieces.append(conflict)
            for token in (ot, tt):
                if token is not None:
                    out.add(token, origin, token)
        elif of is Fate.KEPT and tf is Fate.KEPT:
            assert ot is not None and tt is not None
            # same text on both sides; a formatting change made on one side only is kept
            chosen = tt if ot.lines == b.lines and tt.lines != b.lines else ot
            out.pieces.append(chosen)
            out.add(chosen, origin, ot, tt)
        elif of is Fate.KEPT or tf is Fate.KEPT:
            other = tt if of is Fate.KEPT else ot
            if other is not None:  # changed on one side only; else deleted on one side only
                out.pieces.append(other)
                out.add(other, origin, ot, tt)
        elif of is Fate.DELETED and tf is Fate.DELETED:
            continue
        elif of is Fate.CHANGED and tf is Fate.CHANGED and ot is not None and tt is not None and ot.key == tt.key:
            out.pieces.append(ot)
            out.add(ot, origin, ot, tt)
        elif (both := _whole_entry_merged(b, ot, tt)) is not None:
            out.pieces.append(both)
            out.add(both, origin, ot, tt)
        else:
            conflict = Conflict([ot] if ot is not None else [], [tt] if tt is not None else [])
            out.pieces.append(conflict)
            for token in (ot, tt):
                if token is not None:
                    out.add(token, origin, token)
    return out


def _split_at_heading(tokens: list[Token]) -> tuple[list[Token], list[Token]]:
    """Additions that continue the section they were made in, and the rest: from the first
    line between entries that is not blank (a heading that opens a new section), with the
    blank lines before it."""
    cut = next((i for i, x in enumerate(tokens) if x.entry is None and not x.blank), len(tokens))
    while cut and tokens[cut - 1].blank and cut < len(tokens):
        cut -= 1
    return tokens[:cut], tokens[cut:]


def _merge_gap(out: Merged, ours: list[Token], theirs: list[Token]) -> None:
    """Both sides' additions in one gap: ours first, then theirs, each in the section it was
    added to (theirs' additions to the current section come before a section ours opened);
    what both added, once."""
    ok, tk = [x.key for x in ours], [x.key for x in theirs]
    if tk[: len(ok)] == ok:  # theirs added what ours did, and maybe more
        chosen, twins = theirs, dict(zip(map(id, theirs), ours))
    elif ok[: len(tk)] == tk:
        chosen, twins = ours, dict(zip(map(id, ours), theirs))
    else:
        ours_entries = {x.key: x for x in ours if x.entry is not None}

        def after(mine: list[Token], other: list[Token]) -> list[Token]:
            common = 0  # lines both start with (a blank line, a heading) are written once
            while common < min(len(mine), len(other)) and mine[common].entry is None and mine[common].key == other[common].key:
                out.alias(other[common], mine[common])  # written once: it stands for both
                common += 1
            rest = [x for x in other[common:] if not (x.entry is not None and x.key in ours_entries)]
            return mine + rest if not all(x.blank for x in rest) else mine

        (o_head, o_tail), (t_head, t_tail) = _split_at_heading(ours), _split_at_heading(theirs)
        chosen, twins = after(o_head, t_head) + after(o_tail, t_tail), {}
        for x in theirs:  # an entry both added is kept once (ours): theirs' copy is that one
            if x.entry is not None and x.key in ours_entries:
                out.alias(x, ours_entries[x.key])
    for token in chosen:
        if id(token) in out.twice:
            out.alias(token, out.twice[id(token)])  # added by ours too, elsewhere: once, there
            continue
        if token.entry is not None and out.moved_away[token.key] > 0:
            out.moved_away[token.key] -= 1  # moved by one side, deleted by the other: stays deleted
            continue
        if id(token) in out.contested:
            out.pieces.append(Conflict([token], []) if token.side is Side.OURS else Conflict([], [token]))
            out.add(token, Origin(inserted=token), token)
            continue
        out.pieces.append(token)
        out.add(token, Origin(inserted=token), token, twins.get(id(token)))


# ----------------------------------------------------------------------------- frontmatter


_MISSING = object()


def _later(a: Any, b: Any) -> Any:
    ta = frontmatter_updated_at({"updatedAt": a}) if a is not _MISSING else None
    tb = frontmatter_updated_at({"updatedAt": b}) if b is not _MISSING else None
    if tb is not None and (ta is None or tb > ta):
        return b
    return a


def merge_tags(base: Any, ours: Any, theirs: Any) -> list[str]:
    """Ours, without a tag theirs removed, then the tags theirs added."""
    b = set(tags_of({"tags": base})) if base is not _MISSING else set()
    o = list(tags_of({"tags": ours})) if ours is not _MISSING else []
    t = list(tags_of({"tags": theirs})) if theirs is not _MISSING else []
    kept = [x for x in o if not (x in b and x not in t)]
    return kept + [x for x in t if x not in o and x not in b and x not in kept]


def merge_items(base: Any, ours: Any, theirs: Any) -> list[Any]:
    """A list merged as `merge_tags` merges tags: ours, without an item theirs removed, then
    the items theirs added."""
    b, o, t = ([] if v is _MISSING else v for v in (base, ours, theirs))
    kept = [x for x in o if not (x in b and x not in t)]
    return kept + [x for x in t if x not in o and x not in b]


def merge_meta(base: dict[str, Any], ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any] | None:
    """The merged frontmatter mapping, or None when a key changed differently on both sides."""
    merged: dict[str, Any] = {}
    for key in [*ours, *[k for k in theirs if k not in ours]]:
        vb, vo, vt = base.get(key, _MISSING), ours.get(key, _MISSING), theirs.get(key, _MISSING)
        if vo == vt:
            value = vo
        elif vo == vb:
            value = vt
        elif vt == vb:
            value = vo
        elif key == "tags":
            value = merge_tags(vb, vo, vt)
            if value == list(tags_of({"tags": vo})) and vo is not _MISSING:
                value = vo
            elif value == list(tags_of({"tags": vt})) and vt is not _MISSING:
                value = vt
        elif key == "updatedAt" and vo is not _MISSING and vt is not _MISSING:
            value = _later(vo, vt)
        elif key == "superseded" and all(v is _MISSING or isinstance(v, list) for v in (vb, vo, vt)):
            value = merge_items(vb, vo, vt)  # SPEC §17: supersessions on both sides are all kept
        else:
            return None
        if value is not _MISSING:
            merged[key] = value
    return merged


def _yaml_key_spans(yaml_lines: Sequence[str], meta: dict[str, Any]) -> list[tuple[Any, int, int]] | None:
    """(key, first line, end line) of each top-level key of a block-style mapping, in order,
    or None when the keys cannot be told apart by line (flow style, several keys on a line)."""
    import yaml

    loader, _ = markdown._parsers()
    try:
        node = yaml.compose("".join(yaml_lines), Loader=loader)
    except yaml.YAMLError:
        return None
    if node is None:
        return []
    if not isinstance(node, yaml.MappingNode) or node.flow_style or len(node.value) != len(meta):
        return None
    starts = [key_node.start_mark.line for key_node, _ in node.value]
    if any(b <= a for a, b in zip(starts, starts[1:])):
        return None
    ends = [*starts[1:], len(yaml_lines)]
    return [(key, start, end) for key, start, end in zip(meta, starts, ends)]


def _dump(meta: dict[str, Any], eol: str) -> list[str]:
    import yaml

    text = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, default_flow_style=None, width=10**6)
    return [line + eol for line in text.splitlines()] if meta else []


def _with_eol(lines: Sequence[str], eol: str) -> list[str]:
    return [strip_eol(line) + eol if line != strip_eol(line) else line for line in lines]


def _with_line_ends(version: Version, eol: str) -> Version:
    """`version` with every line end made `eol`, when its own line ends are others (a CRLF file
    stays CRLF; lines a side brings from an LF file become CRLF there)."""
    if version.eol == eol:
        return version
    tokens = [replace(t, lines=tuple(_with_eol(t.lines, eol))) for t in version.tokens]
    return replace(version, eol=eol, header=tuple(_with_eol(version.header, eol)), tokens=tokens)


def render_header(ours: Version, theirs: Version, merged: dict[str, Any], eol: str) -> list[str]:
    """Frontmatter lines holding `merged`: ours' lines, with each key that takes theirs' value
    copied from theirs and a new value (united tags) written in block style; when that does not
    load back as `merged`, the whole mapping written out."""
    candidates: list[list[str]] = []
    o_spans = _yaml_key_spans(ours.header[1:-1], ours.meta) if ours.header else None
    t_spans = _yaml_key_spans(theirs.header[1:-1], theirs.meta) if theirs.header else []
    if o_spans is not None and t_spans is not None:
        o_yaml, t_yaml = list(ours.header[1:-1]), list(theirs.header[1:-1])
        t_lines = {key: t_yaml[start:end] for key, start, end in t_spans}
        body = o_yaml[: o_spans[0][1]] if o_spans else list(o_yaml)
        for key, start, end in o_spans:
            if key not in merged:
                continue
            if merged[key] is ours.meta[key] or merged[key] == ours.meta[key]:
                body += o_yaml[start:end]
            elif key in t_lines and merged[key] == theirs.meta[key]:
                body += t_lines[key]
            else:
                body += _dump({key: merged[key]}, eol)
        for key, value in merged.items():
            if key not in ours.meta:
                body += t_lines[key] if key in t_lines and value == theirs.meta.get(key, _MISSING) else _dump({key: value}, eol)
        fence_open = ours.header[0]
        fence_close = ours.header[-1] if ours.header[-1].endswith(("\n", "\r")) else ours.header[-1] + eol
        candidates.append([fence_open, *body, fence_close])
    candidates.append(["---" + eol, *_dump(merged, eol), "---" + eol])
    for lines in candidates:
        try:
            if markdown.load_frontmatter_yaml("".join(lines[1:-1])) == merged:
                return lines
        except MemoryFileError:
            continue
    raise CannotMergeByEntry("the merged frontmatter cannot be written so that it reads back the same")


@dataclass
class Header:
    ours: list[str]  # the lines in the result when the conflict (if any) is resolved with ours
    theirs: list[str]
    meta_ours: dict[str, Any]
    meta_theirs: dict[str, Any]

    @property
    def conflicting(self) -> bool:
        return self.ours != self.theirs


def merge_header(base: Version, ours: Version, theirs: Version, eol: str) -> Header:
    def norm(version: Version) -> list[str]:
        return [strip_eol(x) for x in version.header]

    t_header = list(theirs.header)
    if norm(ours) == norm(base):
        return Header(t_header, t_header, theirs.meta, theirs.meta)
    if norm(theirs) == norm(base) or norm(theirs) == norm(ours):
        return Header(list(ours.header), list(ours.header), ours.meta, ours.meta)
    merged = merge_meta(base.meta, ours.meta, theirs.meta)
    if merged is None:
        return Header(list(ours.header), t_header, ours.meta, theirs.meta)
    if merged == ours.meta:
        return Header(list(ours.header), list(ours.header), ours.meta, ours.meta)
    if merged == theirs.meta:
        return Header(t_header, t_header, theirs.meta, theirs.meta)
    lines = render_header(ours, theirs, merged, eol)
    return Header(lines, lines, merged, merged)


# ----------------------------------------------------------------------------- writing and checking


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
        for line in piece.lines:
            _push(marked, line, eol)
            for mode in res:
                _push(res[mode], line, eol)
    close()
    return Rendered(marked, res[Mode.OURS], res[Mode.THEIRS], conflicts)


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


def check(text: str, header: Header, mode: Mode, pieces: Sequence[Piece], merged: Merged,
          sides: dict[Side, Version]) -> None:
    """Raise CannotMergeByEntry unless `text` reads back as exactly the merged entries (text,
    order, section) and frontmatter, for `mode` (how its conflicts are resolved)."""
    try:
        parsed = parse_text(text)
    except MemoryFileError as exc:
        raise CannotMergeByEntry(f"the merged file would not load ({exc})") from None
    meta = header.meta_ours if mode is Mode.OURS else header.meta_theirs
    if parsed.meta != meta or parsed.body_line != len(header.ours if mode is Mode.OURS else header.theirs):
        raise CannotMergeByEntry("the merged frontmatter would not read back as merged")
    flat = flatten(pieces, mode)
    tokens = [t for t in flat if t.entry is not None]
    if [t.key[1] for t in tokens] != [e.text for e in parsed.entries]:
        raise CannotMergeByEntry("the merged entries would not read back as merged (two pieces would join)")
    actual = {id(t): e.section for t, e in zip(tokens, parsed.entries)}
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
    done safely (the caller then lets git merge the lines)."""
    base = read_version(base_data, Side.BASE)
    ours = read_version(ours_data, Side.OURS)
    theirs = read_version(theirs_data, Side.THEIRS)
    eol = ours.eol if ours.eol != base.eol else theirs.eol  # a side that changed line ends wins
    bom = BOM if (ours.bom if ours.bom != base.bom else theirs.bom) else ""
    base, ours, theirs = (_with_line_ends(v, eol) for v in (base, ours, theirs))
    header = merge_header(base, ours, theirs, eol)
    merged = merge_tokens(base, ours, theirs)
    sides = {Side.BASE: base, Side.OURS: ours, Side.THEIRS: theirs}
    problem: CannotMergeByEntry | None = None
    for seams in Seams:
        out = render(header, merged, seams, eol)
        try:
            ours_text, theirs_text = bom + "".join(out.ours), bom + "".join(out.theirs)
            check(ours_text, header, Mode.OURS, merged.pieces, merged, sides)
            if theirs_text != ours_text:
                check(theirs_text, header, Mode.THEIRS, merged.pieces, merged, sides)
        except CannotMergeByEntry as exc:
            problem = problem or exc
            continue
        data = (bom + "".join(out.marked)).encode("utf-8")
        if len(data) > MAX_FILE_BYTES:
            raise CannotMergeByEntry("the merged file would be over the 1 MiB limit")
        return EntryMerge(data, out.conflicts)
    assert problem is not None
    raise problem


# ----------------------------------------------------------------------------- the driver


@dataclass(frozen=True)
class DriverResult:
    conflicts: int  # conflict blocks left in the file (0: merged cleanly)
    by_entry: bool  # False: git merged the lines (see `reason`)
    reason: str = ""  # why the entry-wise merge was not used
    error: str = ""  # set when nothing could be merged (OURS left as it was)


def merge_with_git(base: Path, ours: Path, theirs: Path) -> tuple[int, bytes | None, str]:
    """git's own three-way line merge of the three files: (conflicts, merged bytes, error)."""
    try:  # the process gate: git in the folder of the files git handed over (SPEC §8)
        run = process_gate.run_tool(
            ["git", "merge-file", "-p", "-L", "ours", "-L", "base", "-L", "theirs", "--",
             *(str(p.absolute()) for p in (ours, base, theirs))],
            cwd=ours.absolute().parent, timeout=120)
    except (OSError, process_gate.SubprocessError) as exc:
        return 0, None, f"git merge-file could not run ({exc})"
    if not 0 <= run.returncode <= 127:
        return 0, None, run.stderr.decode("utf-8", "replace").strip() or f"git merge-file failed (exit {run.returncode})"
    return run.returncode, run.stdout, ""


def run_driver(base: Path, ours: Path, theirs: Path) -> DriverResult:
    """What `memtui merge-driver` does: merge into `ours` (git's %A) by entry, else by line."""
    import os
    import stat

    try:
        kind = os.lstat(ours).st_mode
    except OSError as exc:
        return DriverResult(1, False, error=f"cannot read {ours}: {exc.strerror}")
    if not stat.S_ISREG(kind):
        what = "a symlink" if stat.S_ISLNK(kind) else "not a regular file"
        return DriverResult(1, False, error=f"{ours} (OURS) is {what}; the result is never written through it")
    try:
        data = [read_regular(p, MAX_REWRITTEN_BYTES) for p in (base, ours, theirs)]  # the bounded reader
    except OSError as exc:
        return DriverResult(1, False, error=f"cannot read {exc.filename or 'a version'}: {exc.strerror or exc}")
    try:
        result = merge_entries(*data)
    except CannotMergeByEntry as exc:
        reason = str(exc)
    except Exception as exc:  # noqa: BLE001 - a driver that fails must leave the merge to git, never half done
        reason = f"the entry-wise merge failed ({type(exc).__name__}: {exc})"
    else:
        if result.data != data[1]:
            failed = _write_ours(ours, result.data)
            if failed:
                return DriverResult(1, True, error=failed)
        return DriverResult(result.conflicts, True)
    conflicts, merged, error = merge_with_git(base, ours, theirs)
    if merged is None:
        return DriverResult(1, False, reason, error)
    if conflicts == 0 and not _lines_merged_whole(merged, data):
        # git's clean line merge joined two entries into one, or moved one under another heading:
        # the two sides as one conflict instead, for a person to settle
        merged, conflicts = whole_file_conflict(data[1], data[2]), 1
        reason += "; git's line merge would have joined or moved entries, so the file is marked as one conflict"
    failed = _write_ours(ours, merged)
    return DriverResult(conflicts, False, reason, failed)


def _lines_merged_whole(merged: bytes, versions: Sequence[bytes]) -> bool:
    """Does git's clean merge read back as entries some version has, each under a heading of
    the same name as there (no two entries joined, none moved to another section)?"""
    try:
        got = parse_text(markdown.decode(merged)).entries
    except (MemoryFileError, UnicodeDecodeError):
        return True  # a file memtui skips anyway: git's merge as it is
    known: set[tuple[str, str]] = set()
    for data in versions:
        try:
            known.update((e.text, e.section) for e in parse_text(markdown.decode(data)).entries)
        except (MemoryFileError, UnicodeDecodeError):
            return True
    return all((e.text, e.section) in known for e in got)


def whole_file_conflict(ours: bytes, theirs: bytes) -> bytes:
    """OURS and THEIRS whole inside one pair of standard conflict markers."""
    eol = b"\r\n" if b"\r\n" in ours else b"\n"

    def ended(data: bytes) -> bytes:
        return data if not data or data.endswith((b"\n", b"\r")) else data + eol

    return (b"<" * MARKER_SIZE + b" ours" + eol + ended(ours) + b"=" * MARKER_SIZE + eol + ended(theirs)
            + b">" * MARKER_SIZE + b" theirs" + eol)


def _write_ours(ours: Path, data: bytes) -> str:
    """The result goes where git asked for it (%A, the file git made for `ours`), through the write
    gate like every write: never through a link put in its place. Returns why it could not, or ""."""
    ours = Path(ours).absolute()
    try:
        gate.write(ours, data, root=ours.parent, kind=gate.Kind.DATA)
    except gate.Refused as exc:
        return str(exc)
    except OSError as exc:
        return f"cannot write {ours}: {exc.strerror or exc}"
    return ""


# ----------------------------------------------------------------------------- install


@dataclass(frozen=True)
class SetupReport:
    lines: list[str]


def _git(repo: Path, *args: str) -> process_gate.CompletedProcess[str]:
    try:  # the process gate: git in the repository it is asked about
        return process_gate.run_tool(["git", "-C", str(repo), *args], cwd=repo, text=True, timeout=60)
    except (OSError, process_gate.SubprocessError) as exc:
        raise GitSetupError(f"git could not run ({exc})") from None


def _check_repository(workspace: Path) -> None:
    run = _git(workspace, "rev-parse", "--is-inside-work-tree")
    if run.returncode != 0 or run.stdout.strip() != "true":
        raise GitSetupError(f"{workspace} is not inside a git work tree (run `git init` first, or pass -w)")


def _is_our_line(line: str) -> bool:
    return line.split() == ATTRIBUTE_LINE.split()


def _read_attributes(path: Path) -> tuple[bytes | None, list[str]]:
    old = read_if_exists(path)
    if old is None:
        return None, []
    try:
        return old, markdown.split_lines(old.decode("utf-8"))
    except UnicodeDecodeError:
        raise GitSetupError(f"{path}: not UTF-8; add the line `{ATTRIBUTE_LINE}` yourself") from None


def install(workspace: Path, command: str) -> SetupReport:
    """Add the attribute line to `<workspace>/.gitattributes` (kept when it is there, every other
    line untouched) and the driver to the repository-local git config."""
    _check_repository(workspace)
    lines: list[str] = []
    path = workspace / ".gitattributes"
    old, current = _read_attributes(path)
    if any(_is_our_line(strip_eol(line)) for line in current):
        lines.append(f"{path}: already has `{ATTRIBUTE_LINE}`")
    else:
        eol = _file_eol(current)
        if current and current[-1] == strip_eol(current[-1]):
            current[-1] += eol
        gate.write(path, "".join([*current, ATTRIBUTE_LINE + eol]).encode("utf-8"), root=workspace, kind=gate.Kind.TEXT,
                   expected=old)
        lines.append(f"{path}: added `{ATTRIBUTE_LINE}` (commit it, so your team's clones use it too)")
    driver = f"{command} merge-driver %O %A %B %P"
    for key, value in ((f"merge.{DRIVER}.name", DRIVER_NAME), (f"merge.{DRIVER}.driver", driver)):
        run = _git(workspace, "config", "--local", key, value)
        if run.returncode != 0:
            raise GitSetupError(f"git config {key} failed: {run.stderr.strip()}")
    lines.append(f"git config (this clone only): merge.{DRIVER}.driver = {driver}")
    return SetupReport(lines)


def uninstall(workspace: Path) -> SetupReport:
    """Remove the attribute line (and `.gitattributes` when nothing else is left in it) and the
    repository-local driver config."""
    _check_repository(workspace)
    lines: list[str] = []
    path = workspace / ".gitattributes"
    old, current = _read_attributes(path)
    kept = [line for line in current if not _is_our_line(strip_eol(line))]
    if old is None or kept == current:
        lines.append(f"{path}: has no `{ATTRIBUTE_LINE}` line")
    elif not "".join(kept).strip():
        gate.remove(path, root=workspace)
        lines.append(f"{path}: removed (it held only `{ATTRIBUTE_LINE}`)")
    else:
        gate.write(path, "".join(kept).encode("utf-8"), root=workspace, kind=gate.Kind.TEXT, expected=old)
        lines.append(f"{path}: removed `{ATTRIBUTE_LINE}`")
    present = _git(workspace, "config", "--local", "--get-regexp", rf"^merge\.{DRIVER}\.").returncode == 0
    if present:
        run = _git(workspace, "config", "--local", "--remove-section", f"merge.{DRIVER}")
        if run.returncode != 0:
            raise GitSetupError(f"git config --remove-section merge.{DRIVER} failed: {run.stderr.strip()}")
        lines.append(f"git config (this clone only): merge.{DRIVER} removed")
    else:
        lines.append(f"git config (this clone only): no merge.{DRIVER} driver set")
    return SetupReport(lines)
