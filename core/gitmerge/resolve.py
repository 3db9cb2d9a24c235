"""The merged sequence: per BASE token and per gap, both sides' changes resolved into kept
tokens and conflicts (see the package's docstring for the rules)."""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from ..markdown import strip_eol
from .align import Changes, Fate, changes
from .parse import Side, Token, Version


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
    if not ours and not theirs:
        return
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
