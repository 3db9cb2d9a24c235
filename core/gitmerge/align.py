"""Each side against BASE, token by token: what it kept, changed or deleted of each BASE token,
and what it added in each gap between them (a diff of keys unique within a version, so linear)."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from .parse import Token, Version


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

    if k == 1 and m == 1:  # one token for one (most replaced runs): what the table below gives for it
        return [(0, 0)] if _pair(old[0], new[0]) else [(None, 0), (0, None)]
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
